// The exercise editor (a Streamlit components-v2 component, mounted in the app's page): a CodeMirror
// editor, a "Run checks" button and a result line.  The student's code never runs in this page:
// it is posted to a sandboxed iframe (sandbox="allow-scripts": an opaque origin, see sandbox.html),
// which runs it in Pyodide in a Web Worker and posts back the harness's JSON.  That JSON (and the
// code) go to Python as the trigger value "report"; the server grades the reported values.
// While the student types, the code goes to Python as the trigger value "draft" (debounced), which the
// server keeps in the student's own space, so a reload keeps it.  The last keystrokes, typed less than the
// debounce before the page was left, would never reach the server: every change is also kept in this
// browser's localStorage under a key of the seat and exercise (data.keep; "" keeps nothing), with the
// server copies it is newer than.  When the editor next opens that exercise on one of those copies, it opens
// on the kept text instead and sends it as a draft.  The draft is also sent at once when the page is hidden.
// The sandbox document and the worker source below are filled in by ui/exercise_editor.py.
const SANDBOX_HTML = __SANDBOX_HTML__;
const WORKER_SOURCE = __WORKER_SOURCE__;
const INSTANCES = new WeakMap();

function jsonLiteral(value) {  // a JS literal safe inside a <script> element
  return JSON.stringify(value).replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
}

function attr(text) {
  return String(text).replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function textHash(text) {  // FNV-1a of the text, with its length: names a server copy in the kept record
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) { h ^= text.charCodeAt(i); h = Math.imul(h, 0x01000193); }
  return (h >>> 0).toString(16) + ":" + text.length;
}

function el(tag, props = {}, text) {
  const e = document.createElement(tag);
  Object.assign(e, props);
  if (text !== undefined) e.textContent = text;
  return e;
}

function mount(host, data) {
  const inst = { data, setTrigger: null, docId: null, editor: null, pending: null, frame: null, destroyed: false };
  const root = el("div", { className: "ex-root" });
  const editorBox = el("div", { className: "ex-editor" });
  const bar = el("div", { className: "ex-bar" });
  const button = el("button", { className: "ex-run", type: "button" }, data.labels.run);
  const status = el("span", { className: "ex-status" });
  status.setAttribute("role", "status");
  status.setAttribute("aria-live", "polite");
  bar.append(button, status);
  root.append(editorBox, bar);
  host.appendChild(root);
  inst.root = root; inst.button = button; inst.status = status;
  root.exerciseEditor = inst;  // a handle for the browser tests and the benchmark (this page only)

  const base = new URL(data.assets, window.location.origin).href;  // .../app/static/vendor/
  const pyodideUrl = base + "pyodide/";

  inst.setStatus = (text, kind) => { status.textContent = text; status.dataset.kind = kind || ""; };
  inst.getCode = () => (inst.editor ? inst.editor.getCode() : inst.fallback.value);
  inst.setCode = (text) => { if (inst.editor) inst.editor.setCode(text); else inst.fallback.value = text; };

  // The kept copy (localStorage, this browser only): {code, known: hashes of the server copies it is newer than}.
  inst.keepKey = ""; inst.known = [];
  inst.keepRead = () => {
    try { const v = JSON.parse(window.localStorage.getItem(inst.keepKey) || "null"); return v && typeof v === "object" ? v : null; }
    catch (e) { return null; }
  };
  inst.keepWrite = (code) => {
    if (!inst.keepKey || code.length > inst.data.limits.max_code) return;
    try { window.localStorage.setItem(inst.keepKey, JSON.stringify({ code, known: inst.known.slice(-20), t: Date.now() })); }
    catch (e) { /* storage full or refused: the server's draft still works */ }
  };
  inst.keepForget = () => { try { if (inst.keepKey) window.localStorage.removeItem(inst.keepKey); } catch (e) { /* refused */ } };
  inst.serverHas = (code) => { inst.known = inst.known.concat([textHash(code)]).slice(-20); };

  // The draft: sent limits.draft_ms after the last change, only when it differs from what the server has.
  inst.lastDraft = null;
  inst.sendDraft = (doc) => {
    clearTimeout(inst.draftTimer);
    inst.draftTimer = null;
    const code = inst.getCode();
    if (!inst.setTrigger || code === inst.lastDraft || code.length > inst.data.limits.max_code) return;
    inst.lastDraft = code;
    root.dataset.draftSent = String((Number(root.dataset.draftSent) || 0) + 1);
    inst.setTrigger("draft", { doc, code });
    if (doc === inst.docId) { inst.serverHas(code); inst.keepWrite(code); }
  };
  inst.scheduleDraft = () => {
    const doc = inst.docId;
    inst.keepWrite(inst.getCode());  // every change, at once: nothing typed is lost when the page is left
    clearTimeout(inst.draftTimer);
    inst.draftTimer = setTimeout(() => inst.sendDraft(doc), inst.data.limits.draft_ms || 1500);
  };
  inst.flushDraft = () => { if (inst.draftTimer) inst.sendDraft(inst.docId); };
  inst.onHide = () => { if (document.visibilityState === "hidden") inst.flushDraft(); };
  window.addEventListener("pagehide", inst.flushDraft);
  document.addEventListener("visibilitychange", inst.onHide);

  // The editor (bundled CodeMirror, served by the app); a plain text area until it has loaded.
  inst.fallback = el("textarea", { className: "ex-fallback", spellcheck: false, rows: 16 });
  inst.fallback.setAttribute("aria-label", data.labels.editor);
  editorBox.appendChild(inst.fallback);
  inst.fallback.addEventListener("input", () => inst.scheduleDraft());
  import(base + "editor.mjs").then(({ createEditor }) => {
    if (inst.destroyed) return;
    const code = inst.fallback.value;
    inst.fallback.remove();
    inst.editor = createEditor(editorBox, { doc: code, root: host instanceof ShadowRoot ? host : document,
      label: inst.data.labels.editor, onChange: () => inst.scheduleDraft() });
  }).catch(() => { /* keep the text area */ });

  // The sandbox: an opaque-origin frame whose policy allows the Pyodide folder and nothing else.
  function makeFrame() {
    if (inst.frame) inst.frame.remove();
    const limits = inst.data.limits;
    const fill = (text, values) => Object.entries(values).reduce((t, [k, v]) => t.split(k).join(v), text);
    const worker = fill(WORKER_SOURCE, { "__PYODIDE__": pyodideUrl, "__MAX_MEMORY__": String(limits.max_memory) });
    const html = fill(SANDBOX_HTML, { "__PYODIDE_ATTR__": attr(pyodideUrl), "__WORKER_JSON__": jsonLiteral(worker),
      "__TIMEOUT_MS__": String(limits.timeout_ms), "__MAX_RESULT__": String(limits.max_result) });
    const frame = el("iframe", { className: "ex-sandbox", title: "exercise runner" });
    frame.setAttribute("sandbox", "allow-scripts");
    frame.setAttribute("referrerpolicy", "no-referrer");
    frame.setAttribute("aria-hidden", "true");
    frame.tabIndex = -1;
    frame.style.cssText = "width:0;height:0;border:0;position:absolute;visibility:hidden";
    frame.srcdoc = html;
    root.appendChild(frame);
    inst.frame = frame;
  }
  inst.onMessage = (ev) => {
    if (!inst.frame || ev.source !== inst.frame.contentWindow) return;  // only our sandbox speaks here
    const m = ev.data || {};
    if (m.type === "ready") {  // the next worker is loaded: "full", "snapshot" or "fallback" (worker.js)
      inst.loadedMs = m.ms; inst.loadedHow = String(m.how || ""); root.dataset.pythonReady = "1"; return;
    }
    if (m.type !== "done" || !inst.pending || m.id !== inst.pending.id) return;
    const run = inst.pending;
    inst.pending = null;
    clearTimeout(run.guard);
    button.disabled = false;
    const report = { nonce: run.id, doc: run.doc, code: run.code, status: String(m.status || "error") };
    if (report.status === "ok") report.result = String(m.result);
    if (report.status === "timeout") inst.setStatus(inst.data.labels.stopped, "stopped");
    else if (report.status === "error") { report.message = String(m.message || "").slice(0, 1000); inst.setStatus(inst.data.labels.failed, "error"); }
    else if (report.status === "too_large") inst.setStatus(inst.data.labels.too_large, "error");
    else inst.setStatus(inst.data.labels.grading, "grading");
    root.dataset.lastStatus = report.status;
    if (typeof m.ms === "number") report.ms = m.ms;
    inst.lastReport = report;
    inst.setTrigger("report", report);
  };
  window.addEventListener("message", inst.onMessage);
  makeFrame();

  button.addEventListener("click", () => {
    if (inst.pending) return;
    const code = inst.getCode();
    if (code.length > inst.data.limits.max_code) {
      inst.setStatus(inst.data.labels.too_long, "error");
      return;
    }
    clearTimeout(inst.draftTimer);  // the run keeps this code; no draft of it is needed
    inst.draftTimer = null;
    inst.lastDraft = code;
    inst.serverHas(code);
    inst.keepWrite(code);
    const id = (crypto.randomUUID ? crypto.randomUUID() : String(Math.random()).slice(2)) + "";
    const doc = inst.docId;
    root.dataset.runNonce = id;
    button.disabled = true;
    inst.setStatus(root.dataset.pythonReady ? inst.data.labels.running : inst.data.labels.loading, "running");
    root.dataset.pythonReady = "";  // this run takes the loaded worker; the sandbox then loads the next
    root.dataset.lastStatus = "running";
    // A second watchdog, in this page: if the sandbox never answers (it cannot, e.g. its process
    // died), a new sandbox replaces it and the run is reported as stopped.
    const guard = setTimeout(() => {
      if (!inst.pending || inst.pending.id !== id) return;
      inst.pending = null;
      button.disabled = false;
      root.dataset.pythonReady = "";
      makeFrame();
      inst.setStatus(inst.data.labels.stopped, "stopped");
      root.dataset.lastStatus = "timeout";
      inst.setTrigger("report", { nonce: id, doc, code, status: "timeout" });
    }, inst.data.limits.timeout_ms + inst.data.limits.load_ms);
    inst.pending = { id, doc, code, guard };
    inst.frame.contentWindow.postMessage({ type: "run", id, code, payload: inst.data.payload, harness: inst.data.harness }, "*");
  });

  inst.update = (d, setTrigger) => {
    inst.data = d;
    inst.setTrigger = setTrigger;
    button.textContent = d.labels.run;
    if (d.doc_id !== inst.docId) {  // another exercise (or a reset): keep the last draft, then load its code
      inst.flushDraft();
      const reset = inst.docId !== null && inst.docId.split(":")[0] === d.doc_id.split(":")[0];
      inst.docId = d.doc_id;
      inst.keepKey = d.keep || "";
      inst.known = [textHash(d.code)];
      inst.lastDraft = d.code;  // what the server has: loading it sends no draft
      // the kept copy wins when it was typed on top of this very server copy (not after a reset, nor over a
      // copy this browser never saw: typed elsewhere since)
      const kept = inst.keepKey && !reset ? inst.keepRead() : null;
      const restore = kept && typeof kept.code === "string" && kept.code !== d.code && Array.isArray(kept.known)
        && kept.known.includes(textHash(d.code)) && kept.code.length <= d.limits.max_code;
      if (restore) inst.known = kept.known.map(String).slice(-20);
      else inst.keepForget();
      inst.setCode(restore ? kept.code : d.code);
      clearTimeout(inst.draftTimer);
      inst.draftTimer = null;
      root.dataset.restored = restore ? "1" : "";
      if (restore) { const doc = inst.docId; setTimeout(() => inst.sendDraft(doc), 0); }  // and the server gets it
    }
    if (!inst.pending) inst.setStatus(d.verdict ? d.verdict.text : "", d.verdict ? d.verdict.kind : "");
    root.dataset.verdictNonce = d.verdict && d.verdict.nonce ? d.verdict.nonce : "";  // the run the line is about
  };
  inst.destroy = () => {
    inst.destroyed = true;
    clearTimeout(inst.draftTimer);
    window.removeEventListener("pagehide", inst.flushDraft);
    document.removeEventListener("visibilitychange", inst.onHide);
    window.removeEventListener("message", inst.onMessage);
    if (inst.pending) clearTimeout(inst.pending.guard);
    if (inst.frame) inst.frame.remove();
    root.remove();
  };
  return inst;
}

export default function (component) {
  const { parentElement, data, setTriggerValue } = component;
  let inst = INSTANCES.get(parentElement);
  if (!inst) {
    inst = mount(parentElement, data);
    INSTANCES.set(parentElement, inst);
  }
  inst.update(data, setTriggerValue);
  return () => { inst.destroy(); INSTANCES.delete(parentElement); };
}
