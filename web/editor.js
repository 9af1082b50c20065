// The exercises' code editor: CodeMirror 6 with Python highlighting, bundled by build.mjs into
// static/vendor/editor.mjs (one ES module, no bare imports) and imported by the exercise component.
import { EditorState } from "@codemirror/state";
import {
  EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter, drawSelection,
} from "@codemirror/view";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { python } from "@codemirror/lang-python";
import {
  syntaxHighlighting, defaultHighlightStyle, indentOnInput, bracketMatching, indentUnit,
} from "@codemirror/language";
import { closeBrackets, closeBracketsKeymap } from "@codemirror/autocomplete";

/**
 * Mount an editor in `parent`. `root` is the document or shadow root its styles go to.
 * Returns {view, getCode(), setCode(text), focus()}.
 * Tab indents; Escape then Tab leaves the editor (CodeMirror's own rule for keyboard users).
 */
export function createEditor(parent, { doc = "", root, onChange, label = "Python code" } = {}) {
  const listener = EditorView.updateListener.of((u) => {
    if (u.docChanged && onChange) onChange(u.state.doc.toString());
  });
  const state = EditorState.create({
    doc,
    extensions: [
      lineNumbers(), highlightActiveLineGutter(), history(), drawSelection(), indentOnInput(),
      bracketMatching(), closeBrackets(), highlightActiveLine(), indentUnit.of("    "),
      syntaxHighlighting(defaultHighlightStyle, { fallback: true }), python(),
      keymap.of([...closeBracketsKeymap, ...defaultKeymap, ...historyKeymap, indentWithTab]),
      EditorView.contentAttributes.of({ "aria-label": label }),
      EditorView.theme({
        "&": { fontSize: "14px", border: "1px solid #c8ced6", borderRadius: "6px", background: "#fff" },
        ".cm-scroller": { fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace", minHeight: "14em",
          maxHeight: "32em", overflow: "auto" },
        "&.cm-focused": { outline: "2px solid #2F6DB5" },
      }),
      listener,
    ],
  });
  const view = new EditorView({ state, parent, root });
  return {
    view,
    getCode: () => view.state.doc.toString(),
    setCode: (text) => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } }),
    focus: () => view.focus(),
  };
}
