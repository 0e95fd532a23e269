// The code editor of an exercise page: CodeMirror 6 over the page's <textarea>, which stays the
// form's field (the editor writes every change back into it), so the form posts the same way
// with or without this script. Bundled by esbuild at set-up (scripts/vendor_static.py) into
// static/vendor/editor.min.js; nothing of CodeMirror is committed.
//
// Keyboard: Tab indents inside the editor; Esc then Tab (or Ctrl-M, which toggles it) moves the
// focus on, as CodeMirror's tab-focus mode does, so the editor is never a keyboard trap.
import { EditorView, basicSetup } from "codemirror";
import { EditorState, Compartment } from "@codemirror/state";
import { keymap } from "@codemirror/view";
import { indentWithTab } from "@codemirror/commands";
import { python } from "@codemirror/lang-python";
import { unifiedMergeView } from "@codemirror/merge";

function starterOf(textarea) {
  const holder = document.getElementById(textarea.dataset.starterId || "");
  return holder ? holder.value : textarea.defaultValue;
}

function mount(textarea) {
  const starter = starterOf(textarea);
  const diff = new Compartment();
  const label = document.querySelector(`label[for="${textarea.id}"]`);
  const view = new EditorView({
    state: EditorState.create({
      doc: textarea.value,
      extensions: [
        basicSetup,
        python(),
        keymap.of([indentWithTab]),
        diff.of([]),
        // The page's Content-Security-Policy allows the editor's <style> elements by this nonce.
        EditorView.cspNonce.of(textarea.dataset.styleNonce || ""),
        EditorView.contentAttributes.of({
          "aria-label": label ? label.textContent.trim() : "Code",
          "aria-multiline": "true",
          // Already in the tab order (it is contenteditable); said outright so that checkers
          // see the scrolling region holds something focusable.
          tabindex: "0",
        }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) textarea.value = update.state.doc.toString();
        }),
      ],
    }),
  });
  textarea.hidden = true;
  textarea.after(view.dom);
  view.dom.classList.add("code-editor");
  if (label) label.addEventListener("click", () => view.focus());

  const form = textarea.form;
  const diffButton = form && form.querySelector('[data-editor-action="diff"]');
  const resetButton = form && form.querySelector('[data-editor-action="reset"]');
  let showing = false;
  if (diffButton) {
    diffButton.hidden = false;
    diffButton.setAttribute("aria-pressed", "false");
    diffButton.addEventListener("click", () => {
      showing = !showing;
      view.dispatch({
        effects: diff.reconfigure(
          showing ? unifiedMergeView({ original: starter, mergeControls: false }) : [],
        ),
      });
      diffButton.textContent = showing ? "Hide my changes" : "Show my changes";
      diffButton.setAttribute("aria-pressed", String(showing));
    });
  }
  if (resetButton) {
    resetButton.hidden = false;
    resetButton.addEventListener("click", () => {
      if (view.state.doc.toString() === starter) return;
      if (!window.confirm("Replace your code with the starter file? Your edits are lost.")) return;
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: starter } });
      view.focus();
    });
  }
  // The textarea is hidden, so keep the value the form posts exactly the editor's text.
  if (form) form.addEventListener("submit", () => (textarea.value = view.state.doc.toString()));
}

function mountAll() {
  document.querySelectorAll("textarea[data-code-editor]").forEach(mount);
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mountAll);
else mountAll();
