// Build the exercises' browser assets into ../static/vendor/ (served by Streamlit's static serving
// at /app/static/vendor/): the CodeMirror editor bundled into one ES module, and the files Pyodide
// needs to start (no packages beyond the standard library). Run by ./lab after `npm ci`.
import { build } from "esbuild";
import { copyFileSync, mkdirSync, rmSync, writeFileSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "static", "vendor");
rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, "pyodide"), { recursive: true });

await build({
  entryPoints: [join(here, "editor.js")],
  bundle: true,
  format: "esm",
  minify: true,
  target: "es2020",
  outfile: join(out, "editor.mjs"),
  logLevel: "warning",
  legalComments: "eof",
});

const pyodide = join(here, "node_modules", "pyodide");
for (const f of ["pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"]) {
  copyFileSync(join(pyodide, f), join(out, "pyodide", f));
}
const version = JSON.parse(readFileSync(join(pyodide, "package.json"), "utf8")).version;
writeFileSync(join(out, "versions.json"), JSON.stringify({ pyodide: version }) + "\n");
console.log(`web assets: ${out} (pyodide ${version}, editor.mjs)`);
