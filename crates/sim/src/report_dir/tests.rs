//! Tests of `report_dir`.

use super::*;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "routersim-report-dir-{name}-{}",
        std::process::id()
    ));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_write_that_fails_leaves_the_previous_report_untouched() {
    let dir = scratch("fail");
    let target = dir.join("out");
    let first = ReportDir::begin(&target).unwrap();
    fs::write(first.path().join("summary.json"), "old").unwrap();
    assert!(first.untouched().contains("no report was written"));
    first.commit().unwrap();
    assert_eq!(names(&target), [COMPLETE, "summary.json"]);

    let second = ReportDir::begin(&target).unwrap();
    fs::write(second.path().join("summary.json"), "new").unwrap();
    fs::write(second.path().join("attempts.csv"), "new").unwrap();
    assert!(second.untouched().contains("previous report at"));
    drop(second); // the write failed
    assert_eq!(names(&target), [COMPLETE, "summary.json"]);
    assert_eq!(
        fs::read_to_string(target.join("summary.json")).unwrap(),
        "old"
    );
    assert_eq!(names(&dir), ["out"], "no staging folder or lock left");

    let third = ReportDir::begin(&target).unwrap();
    fs::write(third.path().join("requests.csv"), "x").unwrap();
    third.commit().unwrap();
    assert_eq!(
        names(&target),
        [COMPLETE, "requests.csv"],
        "replaced as a whole"
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn the_lock_refuses_a_second_writer_until_the_first_ends() {
    let dir = scratch("lock");
    let target = dir.join("out");
    let first = ReportDir::begin(&target).unwrap();
    let err = ReportDir::begin(&target).unwrap_err();
    assert!(
        matches!(&err, ReportDirError::Locked { holder, .. } if *holder == format!("pid {}", std::process::id())),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("is being written by another routersim")
    );
    drop(first);
    let again = ReportDir::begin(&target).unwrap();
    assert!(again.notes.is_empty(), "{:?}", again.notes);
    drop(again);
    // A lock file left by a dead writer (its pid inside) is taken over, and said.
    fs::write(dir.join(".out.lock"), "4194305\n").unwrap();
    fs::create_dir(dir.join(".out.tmp-4194305")).unwrap();
    let taken = ReportDir::begin(&target).unwrap();
    assert!(
        taken.notes[0].contains("took over the lock"),
        "{:?}",
        taken.notes
    );
    assert!(
        taken.notes[1].contains("removed the unfinished report"),
        "{:?}",
        taken.notes
    );
    drop(taken);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_previous_report_moved_aside_by_a_dead_writer_is_put_back() {
    let dir = scratch("aside");
    let target = dir.join("out");
    fs::create_dir(dir.join(".out.old-4194305")).unwrap();
    fs::write(dir.join(".out.old-4194305/summary.json"), "old").unwrap();
    // A sibling whose name merely starts like ours is not ours.
    fs::create_dir(dir.join(".out.tmp-7.tmp-9")).unwrap();
    let w = ReportDir::begin(&target).unwrap();
    assert!(
        w.notes[0].contains("put the previous report back"),
        "{:?}",
        w.notes
    );
    assert_eq!(
        fs::read_to_string(target.join("summary.json")).unwrap(),
        "old"
    );
    drop(w);
    assert!(dir.join(".out.tmp-7.tmp-9").exists());
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn kept_nested_reports_move_into_the_new_folder() {
    let dir = scratch("keep");
    let target = dir.join("sweep");
    let keep: fn(&str) -> bool = |name| name.starts_with("shard-");
    // A folder holding only a nested report (and its writer's lock) is not foreign.
    fs::create_dir_all(target.join("shard-1-of-2")).unwrap();
    fs::write(target.join("shard-1-of-2/summary.json"), "shard").unwrap();
    fs::write(target.join(".shard-2-of-2.lock"), "").unwrap();
    assert!(ReportDir::begin(&target).is_err());
    let w = ReportDir::begin_keeping(&target, keep).unwrap();
    fs::create_dir_all(w.path().join("runs/c001")).unwrap();
    w.commit().unwrap();
    assert_eq!(names(&target), [COMPLETE, "runs", "shard-1-of-2"]);
    assert_eq!(
        fs::read_to_string(target.join("shard-1-of-2/summary.json")).unwrap(),
        "shard"
    );
    // The next write replaces the rest as a whole and keeps the shard again.
    let w = ReportDir::begin_keeping(&target, keep).unwrap();
    w.commit().unwrap();
    assert_eq!(names(&target), [COMPLETE, "shard-1-of-2"]);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn only_routersim_folders_are_replaced() {
    let dir = scratch("foreign");
    let notes = dir.join("notes");
    fs::create_dir(&notes).unwrap();
    fs::write(notes.join("todo.txt"), "mine").unwrap();
    let err = ReportDir::begin(&notes).unwrap_err();
    assert!(err.to_string().contains("not a routersim report"), "{err}");
    fs::write(dir.join("file"), "x").unwrap();
    assert!(ReportDir::begin(&dir.join("file")).is_err());
    assert!(matches!(
        ReportDir::begin(Path::new("..")),
        Err(ReportDirError::NoName(_))
    ));
    // An older routersim's report (no marker) is replaceable.
    let legacy = dir.join("legacy");
    fs::create_dir(&legacy).unwrap();
    fs::write(legacy.join("summary.json"), "{}").unwrap();
    ReportDir::begin(&legacy).unwrap().commit().unwrap();
    assert_eq!(names(&legacy), [COMPLETE]);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn folder_names_stay_one_plain_folder() {
    for ok in ["rate-limit-storm", "a b", "v1.2", "ünïcode", ".hidden"] {
        assert!(check_folder_name(ok).is_ok(), "{ok:?}");
    }
    for (bad, why) in [
        ("", "is empty"),
        ("  ", "is empty"),
        ("a/b", "contains `/`"),
        ("a\\b", "contains `\\`"),
        ("..", "contains `..`"),
        ("a..b", "contains `..`"),
        ("a\0b", "control character (U+0000)"),
        ("a\nb", "control character"),
        (".", "is `.`"),
    ] {
        let err = check_folder_name(bad).unwrap_err();
        assert!(err.contains(why), "{bad:?}: {err}");
    }
}
