// The exercise runner's Web Worker: a module worker started from a data: URL inside the sandboxed,
// opaque-origin frame (sandbox.html), under that frame's Content-Security-Policy (connect-src and
// script-src: only the Pyodide folder). One worker runs one "Run checks" and is then thrown away,
// so nothing a student's code changes in the interpreter outlives its run.
// The Pyodide folder URL and the memory cap (bytes) below are filled in by component.js.
const PYODIDE = "__PYODIDE__";
const MAX_MEMORY = __MAX_MEMORY__;

// A cap on the interpreter's memory: Pyodide grows its WebAssembly memory through this method; past
// the cap the growth fails, and Python raises MemoryError instead of taking the tab's memory.
const grow = WebAssembly.Memory.prototype.grow;
Object.defineProperty(WebAssembly.Memory.prototype, "grow", {
  value: function (pages) {
    if (this.buffer.byteLength + pages * 65536 > MAX_MEMORY) throw new RangeError("memory limit of the exercise runner");
    return grow.call(this, pages);
  },
  writable: false, configurable: false,
});

const started = performance.now();
let pyodide = null;
const ready = (async () => {
  const { loadPyodide } = await import(PYODIDE + "pyodide.mjs");
  pyodide = await loadPyodide({ indexURL: PYODIDE, fullStdLib: false });
  pyodide.setStdout({ batched: () => {} });  // the harness captures print() itself
  pyodide.setStderr({ batched: () => {} });
  self.postMessage({ type: "ready", ms: Math.round(performance.now() - started) });
})().catch((err) => {
  self.postMessage({ type: "failed", message: String(err && err.message || err).slice(0, 500) });
  throw err;
});

self.onmessage = async (event) => {
  const { id, code, payload, harness } = event.data || {};
  try {
    await ready;
    const t0 = performance.now();
    const ns = pyodide.globals.get("dict")();
    pyodide.runPython(harness, { globals: ns, filename: "<harness>" });
    const runChecks = ns.get("run_checks");
    const out = runChecks(code, payload);
    self.postMessage({ type: "result", id, result: String(out), ms: Math.round(performance.now() - t0) });
  } catch (err) {
    self.postMessage({ type: "error", id, message: String(err && err.message || err).slice(-2000) });
  }
};
