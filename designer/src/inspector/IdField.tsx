// An id that others refer to: edited locally, applied on Enter or blur as
// one rename (which carries the references along), refused when invalid.

import { useEffect, useState } from "react";

export function IdField(props: {
  value: string;
  onRename: (next: string) => string | null;
  testId?: string;
  label?: string;
}) {
  const [text, setText] = useState(props.value);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setText(props.value);
    setError(null);
  }, [props.value]);
  const commit = () => {
    if (text === props.value) return;
    const err = props.onRename(text);
    setError(err);
  };
  return (
    <div className={`field field-id${error ? " invalid" : ""}`}>
      <div className="field-head">
        <label>{props.label ?? "id"}</label>
      </div>
      <input
        type="text"
        value={text}
        data-testid={props.testId}
        spellCheck={false}
        autoComplete="off"
        onChange={(e) => setText(e.target.value)}
        onBlur={commit}
        onKeyDown={(e) => {
          if (e.key === "Enter") commit();
          if (e.key === "Escape") {
            setText(props.value);
            setError(null);
          }
        }}
      />
      {error ? <div className="json-error">{error}</div> : null}
    </div>
  );
}
