import type { Dataset, DatasetItem } from "@kiln/sdk";
import { useCallback, useState } from "react";
import { useAction, useLoaded } from "./action.js";
import { variablesLink } from "./playground-link.js";
import type { PageProps } from "./router.js";
import { DataTable, Empty, ErrorBox, Field, Link, Loading, SelectField } from "./ui.js";

const json = (value: unknown) => (value === null ? "—" : JSON.stringify(value));
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** One dataset: its items at the current version, and an import of a CSV or JSONL file (docs/datasets.md). */
export function DatasetDetail({ kiln, id, navigate }: PageProps & { id: string }) {
  const { error, setError, submit, busy } = useAction();
  const [format, setFormat] = useState<"csv" | "jsonl">("csv");
  const [content, setContent] = useState("");
  const [notice, setNotice] = useState("");
  const read = useCallback(async () => {
    const [dataset, items] = await Promise.all([kiln.datasets.get(id), kiln.datasets.items(id, { limit: 200 })]);
    return { dataset, items: items.data };
  }, [kiln, id]);
  const { value, reload } = useLoaded<{ dataset: Dataset; items: DatasetItem[] }>(read, setError);
  const importFile = submit(async () => {
    setNotice("");
    const r = await kiln.datasets.import(id, { format, content });
    setContent("");
    setNotice(`Imported ${r.imported} item${r.imported === 1 ? "" : "s"}: version ${r.dataset.version}.`);
    reload();
  });
  if (!value) return error ? <ErrorBox error={error} /> : <Loading what="the dataset" />;
  const { dataset, items } = value;
  return (
    <main>
      <h1>{dataset.name}</h1>
      {dataset.description && <p>{dataset.description}</p>}
      <p>
        Version {dataset.version}, {dataset.itemCount} item{dataset.itemCount === 1 ? "" : "s"}.
      </p>
      <div className="columns">
        <form className="card" onSubmit={importFile} noValidate>
          <h2>Import</h2>
          <SelectField
            id="dataset-format"
            label="Format"
            value={format}
            onChange={(f) => setFormat(f as typeof format)}
          >
            <option value="csv">CSV</option>
            <option value="jsonl">JSONL</option>
          </SelectField>
          <p>
            CSV: a header row; columns are input variables, except <code>expected_output</code> and{" "}
            <code>metadata.*</code>. JSONL: one <code>{"{input, expectedOutput?, metadata?}"}</code> a line.
          </p>
          <Field label="File content" multiline rows={6} value={content} onChange={setContent} />
          <ErrorBox error={error} />
          {notice && <p role="status">{notice}</p>}
          <button type="submit" disabled={busy}>
            Import items
          </button>
        </form>
        <section aria-labelledby="items">
          <h2 id="items">Items</h2>
          {items.length === 0 ? (
            <Empty>No item yet.</Empty>
          ) : (
            <DataTable label="Dataset items" columns={["Input", "Expected output", "Metadata", "Added in", ""]}>
              {items.map((i) => (
                <tr key={i.id}>
                  <td>
                    <code>{json(i.input)}</code>
                  </td>
                  <td>
                    <code>{json(i.expectedOutput)}</code>
                  </td>
                  <td>
                    <code>{json(i.metadata)}</code>
                  </td>
                  <td>v{i.addedInVersion}</td>
                  <td>
                    {isObject(i.input) && (
                      <Link to={variablesLink(i.input)} navigate={navigate}>
                        Try in the playground
                      </Link>
                    )}
                  </td>
                </tr>
              ))}
            </DataTable>
          )}
        </section>
      </div>
    </main>
  );
}
