import type { Dataset } from "@kiln/sdk";
import { useCallback } from "react";
import { useAction, useFields, useLoaded } from "./action.js";
import { LinkList, Listed } from "./resource-list.js";
import type { PageProps } from "./router.js";
import { ErrorBox, Field } from "./ui.js";

/** Datasets: the organization's datasets, and a new one (docs/datasets.md). */
export function Datasets({ kiln, session, navigate }: PageProps) {
  const { error, setError, submit, busy } = useAction();
  const { values, field } = useFields({ name: "", description: "" }, error);
  const organizationId = session.organizationId ?? "";
  const read = useCallback(
    async () => (await kiln.datasets.list({ organizationId, limit: 200 })).data,
    [kiln, organizationId],
  );
  const { value: datasets } = useLoaded<Dataset[]>(read, setError);
  const create = submit(async () => {
    const dataset = await kiln.datasets.create({ organizationId, name: values.name, description: values.description });
    navigate(`/datasets/${dataset.id}`);
  });
  return (
    <main>
      <h1>Datasets</h1>
      <p>
        Datasets hold items (input variables, an expected output, metadata) that evaluations run on. Every change of
        items makes a new version.
      </p>
      <div className="columns">
        <form className="card" onSubmit={create} noValidate>
          <h2>New dataset</h2>
          <Field label="Dataset name" {...field("name")} required />
          <Field label="Description" multiline rows={2} {...field("description")} />
          <ErrorBox error={error} shownFields={["name", "description"]} />
          <button type="submit" disabled={busy}>
            Create dataset
          </button>
        </form>
        <section aria-labelledby="datasets">
          <h2 id="datasets">Datasets</h2>
          <Listed items={datasets} what="the datasets" empty="No dataset yet.">
            {(ds) => (
              <LinkList
                items={ds}
                to={(d) => `/datasets/${d.id}`}
                label={(d) => d.name}
                summary={(d) => `version ${d.version}, ${d.itemCount} item${d.itemCount === 1 ? "" : "s"}`}
                navigate={navigate}
              />
            )}
          </Listed>
        </section>
      </div>
    </main>
  );
}
