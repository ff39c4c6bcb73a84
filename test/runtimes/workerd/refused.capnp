# The matrix's workerd workers that try what workerd refuses: darmok/inline,
# and init() with the .wasm's bytes (a data module, which workerd does not
# compile, so a broken core still starts them). Bundled by
# test/runtimes/matrix.mjs beside this file; the addresses are
# placeholders for --socket-addr NAME=127.0.0.1:PORT.
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "inline", worker = .inlineWorker),
    (name = "bytes", worker = .bytesWorker),
  ],
  sockets = [
    (name = "inline", address = "127.0.0.1:8702", http = (), service = "inline"),
    (name = "bytes", address = "127.0.0.1:8703", http = (), service = "bytes"),
  ],
);

const inlineWorker :Workerd.Worker = (
  modules = [(name = "worker.mjs", esModule = embed "inline-worker.mjs")],
  compatibilityDate = "2026-11-01",
);

const bytesWorker :Workerd.Worker = (
  modules = [
    (name = "worker.mjs", esModule = embed "bytes-worker.mjs"),
    (name = "darmok-bytes.bin", data = embed "darmok.wasm"),
  ],
  compatibilityDate = "2026-11-01",
);
