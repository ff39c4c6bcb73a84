# The same Worker under workerd alone, as darmok's tests run it
# (test/runtimes/matrix.mjs). Bundle it beside this file, keeping the .wasm
# import for workerd, which makes it the WebAssembly.Module below:
#   npx esbuild src/worker.mjs --bundle --format=esm --outfile=worker.mjs --external:darmok/darmok.wasm
#   cp node_modules/darmok/build/darmok.wasm .
#   npx workerd serve config.capnp
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [(name = "main", worker = .worker)],
  sockets = [(name = "http", address = "127.0.0.1:8787", http = (), service = "main")],
);

const worker :Workerd.Worker = (
  modules = [
    (name = "worker.mjs", esModule = embed "worker.mjs"),
    (name = "darmok/darmok.wasm", wasm = embed "darmok.wasm"),
  ],
  compatibilityDate = "2026-11-01",
);
