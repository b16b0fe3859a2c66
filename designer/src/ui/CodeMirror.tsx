// A controlled CodeMirror 6 editor. No CodeMirror history: Ctrl+Z goes to
// the editor's one undo stack, like every other edit.

import { useEffect, useRef } from "react";
import { Compartment, EditorState, type Extension } from "@codemirror/state";
import { EditorView, drawSelection, highlightActiveLine, keymap, lineNumbers } from "@codemirror/view";
import { defaultKeymap, indentWithTab } from "@codemirror/commands";
import { bracketMatching, defaultHighlightStyle, indentOnInput, syntaxHighlighting } from "@codemirror/language";

export interface CodeMirrorProps {
  value: string;
  onChange: (text: string) => void;
  language?: Extension;
  onBlur?: () => void;
  testId?: string;
  className?: string;
  lineNumbers?: boolean;
  ariaLabel?: string;
}

export function CodeMirror(props: CodeMirrorProps) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const lang = useRef(new Compartment());
  const external = useRef(false);
  const cb = useRef(props);
  cb.current = props;

  useEffect(() => {
    const v = new EditorView({
      parent: host.current!,
      state: EditorState.create({
        doc: props.value,
        extensions: [
          props.lineNumbers === false ? [] : lineNumbers(),
          drawSelection(),
          highlightActiveLine(),
          bracketMatching(),
          indentOnInput(),
          syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
          keymap.of([...defaultKeymap, indentWithTab]),
          lang.current.of(props.language ?? []),
          EditorView.lineWrapping,
          EditorView.contentAttributes.of({ "aria-label": props.ariaLabel ?? "code" }),
          EditorView.updateListener.of((u) => {
            if (u.docChanged && !external.current) cb.current.onChange(u.state.doc.toString());
          }),
          EditorView.domEventHandlers({ blur: () => cb.current.onBlur?.() }),
        ],
      }),
    });
    view.current = v;
    return () => v.destroy();
    // The view lives as long as the component; props flow in through the effects below.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  // A value changed outside (undo, another tab): replace the text.
  useEffect(() => {
    const v = view.current;
    if (!v) return;
    const cur = v.state.doc.toString();
    if (cur === props.value) return;
    external.current = true;
    try {
      v.dispatch({ changes: { from: 0, to: cur.length, insert: props.value } });
    } finally {
      external.current = false;
    }
  }, [props.value]);

  useEffect(() => {
    view.current?.dispatch({ effects: lang.current.reconfigure(props.language ?? []) });
  }, [props.language]);

  return <div ref={host} className={`cm-host ${props.className ?? ""}`} data-testid={props.testId} />;
}
