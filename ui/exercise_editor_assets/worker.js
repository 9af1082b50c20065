// The exercise runner's Web Worker: a module worker started from a data: URL inside the sandboxed,
// opaque-origin frame (sandbox.html), under that frame's Content-Security-Policy (connect-src and
// script-src: only the Pyodide folder). One worker runs one "Run checks" and is then thrown away,
// so nothing a student's code changes in the interpreter outlives its run.
// The frame's first message says how to start Python:
//   {type: "init", makeSnapshot: true}  a full load, then a memory snapshot of the interpreter as it is
//                                       right after start-up (no student code has run in it yet),
//                                       posted back to the frame as {type: "snapshot"};
//   {type: "init", snapshot}            a restore of that snapshot: the same fresh interpreter, ready in
//                                       a fraction of a full load (no start-up of Python again);
//                                       if the restore fails, a full load instead ("fallback").
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

// The interpreter's compiled code (a WebAssembly.Module: code only, no memory, nothing a run can change),
// compiled once by the frame's first worker and handed to every later one with the snapshot, so a
// fresh interpreter does not compile Python's 8 MB of WebAssembly again for each "Run checks".
let compiled = null;
const instantiateStreaming = WebAssembly.instantiateStreaming;
WebAssembly.instantiateStreaming = async function (source, imports) {
  if (compiled) {
    Promise.resolve(source).then((r) => r.body && r.body.cancel(), () => {});  // its download: not needed
    return { instance: await WebAssembly.instantiate(compiled, imports), module: compiled };
  }
  const out = await instantiateStreaming.call(WebAssembly, source, imports);
  compiled = out.module;
  return out;
};

let pyodide = null;
let started = null;

// Before a student's code runs (once: the worker serves one run): Python's ways to JavaScript go. The
// JavaScript modules `js` (this worker's global scope) and `pyodide_js` are unregistered (the harness
// drops what Python had loaded of them, and Pyodide's own bridge), and WebAssembly's constructors are
// replaced by ones that throw, so nothing can make a new memory beside the capped one.
function lockDown() {
  for (const name of ["js", "pyodide_js"]) {
    try { pyodide.unregisterJsModule(name); } catch (err) { /* not registered */ }
  }
  const refuse = function () { throw new Error("not available in the exercise sandbox"); };
  for (const key of ["Memory", "Module", "Instance", "Table", "Global", "Tag", "Exception", "compile",
                     "compileStreaming", "instantiate", "instantiateStreaming", "validate"]) {
    try { Object.defineProperty(WebAssembly, key, { value: refuse, writable: false, configurable: false }); }
    catch (err) { /* already locked */ }
  }
}

async function start(init) {
  const t0 = performance.now();
  const { loadPyodide } = await import(PYODIDE + "pyodide.mjs");
  const options = { indexURL: PYODIDE, fullStdLib: false };
  let how = "full";
  if (init.snapshot) {
    if (init.module instanceof WebAssembly.Module) compiled = init.module;
    try {
      pyodide = await loadPyodide({ ...options, _loadSnapshot: init.snapshot });
      how = "snapshot";
    } catch (err) {
      pyodide = null;
      compiled = null;  // compiled again too, in case the handed-over code was what failed
      how = "fallback";  // e.g. a snapshot this build cannot read: start Python the long way
    }
  }
  if (!pyodide) {
    pyodide = await loadPyodide({ ...options, _makeSnapshot: Boolean(init.makeSnapshot) });
    if (init.makeSnapshot) {
      try {
        const snapshot = pyodide.makeMemorySnapshot();
        self.postMessage({ type: "snapshot", snapshot, module: compiled }, [snapshot.buffer]);
      } catch (err) { /* no snapshot: every worker loads in full */ }
    }
  }
  pyodide.setStdout({ batched: () => {} });  // the harness captures print() itself
  pyodide.setStderr({ batched: () => {} });
  self.postMessage({ type: "ready", ms: Math.round(performance.now() - t0), how });
}

self.onmessage = async (event) => {
  const m = event.data || {};
  if (m.type === "init") {
    if (started) return;
    started = start(m).catch((err) => {
      self.postMessage({ type: "failed", message: String(err && err.message || err).slice(0, 500) });
      throw err;
    });
    return;
  }
  const { id, code, payload, harness } = m;
  try {
    if (!started) throw new Error("the runner was not started");
    await started;
    const t0 = performance.now();
    const ns = pyodide.globals.get("dict")();
    pyodide.runPython(harness, { globals: ns, filename: "<harness>" });
    const runChecks = ns.get("run_checks");
    lockDown();
    const out = runChecks(code, payload);  // the harness locks Python out of JavaScript first (_lock_down)
    self.postMessage({ type: "result", id, result: String(out), ms: Math.round(performance.now() - t0) });
  } catch (err) {
    self.postMessage({ type: "error", id, message: String(err && err.message || err).slice(-2000) });
  }
};
