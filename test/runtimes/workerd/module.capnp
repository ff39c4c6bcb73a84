# The matrix's workerd worker that loads darmok the one way workerd allows
# (test/runtimes/matrix.mjs bundles module-worker.mjs beside this file).
# The address is a placeholder: the matrix passes a free loopback port with
# --socket-addr module=127.0.0.1:PORT.
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [(name = "module", worker = .moduleWorker)],
  sockets = [(name = "module", address = "127.0.0.1:8701", http = (), service = "module")],
);

# nodejs_compat: the fixture table makes Buffers.
const moduleWorker :Workerd.Worker = (
  modules = [
    (name = "worker.mjs", esModule = embed "module-worker.mjs"),
    (name = "darmok/darmok.wasm", wasm = embed "darmok.wasm"),
  ],
  compatibilityDate = "2026-11-01",
  compatibilityFlags = ["nodejs_compat"],
);
