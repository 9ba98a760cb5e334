use super::*;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn print_variant() {
    let e = Explorer::prepare(
        &repo().join("scenarios/proxy-config-429-storm.yaml"),
        ExploreOptions::default(),
    )
    .unwrap();
    for s in 1..4 {
        println!("{}", to_yaml(&e.variant(s)));
    }
}
