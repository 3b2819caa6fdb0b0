/**
 * Word-level diffs of text (jsdiff's diffWords, loaded with the first diff shown): the words a
 * change removed struck through, the words it added marked. Used by the version diffs (a text
 * field changed between versions, or between a draft and its base) and the evaluation comparison.
 */
import type { ChangeObject } from "diff";
import { useEffect, useState } from "react";

export type DiffPart = ChangeObject<string>;

/** The word diff of `before` → `after`; null until jsdiff is loaded. */
export function useWordDiff(before: string, after: string): DiffPart[] | null {
  const [parts, setParts] = useState<DiffPart[] | null>(null);
  useEffect(() => {
    let live = true;
    import("diff").then(({ diffWords }) => {
      if (live) setParts(diffWords(before, after));
    });
    return () => {
      live = false;
    };
  }, [before, after]);
  return parts;
}

/**
 * The parts of a diff: on the "before" side the kept and removed words, on the "after" side the
 * kept and added ones, or both in one text.
 */
export function DiffParts({ parts, side = "both" }: { parts: DiffPart[]; side?: "before" | "after" | "both" }) {
  return (
    <pre className="output diff">
      {parts.map((part, i) =>
        part.added ? (
          side !== "before" && (
            // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one diff, in order
            <ins key={i}>{part.value}</ins>
          )
        ) : part.removed ? (
          side !== "after" && (
            // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one diff, in order
            <del key={i}>{part.value}</del>
          )
        ) : (
          // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one diff, in order
          <span key={i}>{part.value}</span>
        ),
      )}
    </pre>
  );
}

/**
 * A text field's before and after cells of a diff table, each with its words marked (`marked`
 * false: the two shown as they are, as for a field that did not change).
 */
export function TextChangeCells({ before, after, marked = true }: { before: string; after: string; marked?: boolean }) {
  const parts = useWordDiff(marked ? before : "", marked ? after : "");
  if (!parts || !marked) {
    return (
      <>
        <td>
          <pre className="output">{before}</pre>
        </td>
        <td>
          <pre className="output">{after}</pre>
        </td>
      </>
    );
  }
  return (
    <>
      <td>
        <DiffParts parts={parts} side="before" />
      </td>
      <td>
        <DiffParts parts={parts} side="after" />
      </td>
    </>
  );
}
