# routersim's container image: the binary, built in a Rust stage, on a slim Debian base, run as
# a non-root user. Untested by this repository's CI (no container engine can run there; see
# docs/install.md).
#   docker build -t routersim .
#   docker run --rm -v "$PWD:/work" routersim check scenarios/ci
# The binary links only glibc, libm and libgcc_s (no TLS library: routersim speaks plain HTTP),
# all in the slim base.
FROM rust:1.89-slim-bookworm AS build
WORKDIR /src
COPY . .
# --locked: the dependency versions of Cargo.lock, as CI tests them.
RUN cargo build --release --locked --bin routersim

FROM debian:bookworm-slim
RUN useradd --system --uid 10001 --user-group --create-home --home-dir /home/routersim routersim \
    && mkdir /work && chown routersim:routersim /work
COPY --from=build /src/target/release/routersim /usr/local/bin/routersim
USER routersim
# Mount the scenarios here; reports go to ./reports below it (add --user "$(id -u):$(id -g)" to
# `docker run` when uid 10001 cannot write to the mounted folder).
WORKDIR /work
ENTRYPOINT ["routersim"]
CMD ["--help"]
