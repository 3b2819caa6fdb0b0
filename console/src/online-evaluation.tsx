import type { Kiln, OnlineRule } from "@kiln/sdk";
import { useCallback, useEffect, useState } from "react";
import { useAction } from "./action.js";
import type { Session } from "./api.js";
import { type AssertionDraft, AssertionsEditor, assertionsOf, draftOf } from "./evaluation-assertions.js";
import { percent } from "./evaluation-format.js";
import { OnlineScores } from "./online-scores.js";
import { NO_TARGET, type TargetDraft, TargetFields, targetOf, useTargets } from "./online-target.js";
import { usePagedList } from "./paged-list.js";
import type { Navigate } from "./router.js";
import { ActButton, DataTable, Empty, ErrorBox, Field, Loading } from "./ui.js";

/** A rule's target as a person reads it: the prompt's (skill's, agent's) name and its label, or the trace filter. */
function describeRuleTarget(rule: OnlineRule, names: Map<string, string>): string {
  const t = rule.target;
  if (t.kind === "traces") {
    const parts = Object.entries(t.filter ?? {}).map(([k, v]) => `${k} ${v}`);
    return `generations${parts.length ? ` (${parts.join(", ")})` : ""}`;
  }
  return `${t.kind} ${names.get(t.id ?? "") ?? t.id}${t.label ? ` @ ${t.label}` : ""}`;
}

/** The create or edit form of a rule; an edited rule keeps its target. */
function RuleForm({
  kiln,
  session,
  editing,
  targets,
  onSaved,
  onCancel,
}: {
  kiln: Kiln;
  session: Session;
  editing: OnlineRule | null;
  targets: NonNullable<ReturnType<typeof useTargets>>;
  onSaved: () => void;
  onCancel: () => void;
}) {
  const { error, submit, busy } = useAction();
  const [name, setName] = useState(editing?.name ?? "");
  const [rate, setRate] = useState(editing ? String(editing.sampleRate * 100) : "10");
  const [target, setTarget] = useState<TargetDraft>(NO_TARGET);
  const [assertions, setAssertions] = useState<AssertionDraft[]>(
    editing ? editing.assertions.map(draftOf) : [{ type: "contains", fields: {} }],
  );
  const save = submit(async () => {
    const body = { name, sampleRate: Number(rate) / 100, assertions: assertionsOf(assertions) };
    if (editing) await kiln.onlineRules.update(editing.id, body);
    else await kiln.onlineRules.create({ organizationId: session.organizationId, ...body, target: targetOf(target) });
    onSaved();
  });
  return (
    <form onSubmit={save} aria-label={editing ? `Edit rule ${editing.name}` : "New online rule"} className="card">
      <h2>{editing ? `Edit “${editing.name}”` : "New online rule"}</h2>
      <Field label="Rule name" value={name} onChange={setName} required issue={error?.fields.name} />
      {!editing && <TargetFields kiln={kiln} targets={targets} draft={target} onChange={setTarget} />}
      <Field
        label="Sample rate (% of matching runs scored)"
        type="number"
        value={rate}
        onChange={setRate}
        issue={error?.fields.sampleRate}
      />
      <AssertionsEditor drafts={assertions} onChange={setAssertions} />
      <ErrorBox error={error} shownFields={["name", "sampleRate"]} />
      <div className="actions">
        <button type="submit" disabled={busy}>
          {editing ? "Save rule" : "Create rule"}
        </button>
        {editing && (
          <button type="button" className="secondary" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}

/**
 * Online evaluation: the organization's rules (each samples a share of production runs or
 * ingested generations and scores it with evaluation assertions), a form to create or edit one,
 * and the scores with their chart over time.
 */
export function OnlineEvaluation({ kiln, session, navigate }: { kiln: Kiln; session: Session; navigate: Navigate }) {
  const { items: rules, more, loading, error: listError, start, next } = usePagedList<OnlineRule>();
  const { error, act } = useAction();
  const targets = useTargets(kiln, session.organizationId);
  const [editing, setEditing] = useState<OnlineRule | null>(null);
  const [formKey, setFormKey] = useState(0);
  const reload = useCallback(
    () => start(kiln.onlineRules.list({ organizationId: session.organizationId, limit: 200 }).pages()),
    [kiln, session, start],
  );
  useEffect(reload, [reload]);
  const names = new Map(
    targets ? [...targets.prompt, ...targets.skill, ...targets.agent].map((t) => [t.id, t.name]) : [],
  );
  const saved = () => {
    setEditing(null);
    setFormKey((k) => k + 1);
    reload();
  };
  return (
    <main>
      <h1>Online evaluation</h1>
      <p className="hint">
        Rules score a sampled share of production runs in the background, with the assertions evaluations use.
      </p>
      <ErrorBox error={listError ?? error} />
      {rules === null ? (
        <Loading what="rules" />
      ) : rules.length === 0 ? (
        <Empty>No rule yet: create one below.</Empty>
      ) : (
        <DataTable label="Online rules" columns={["Rule", "Samples", "Rate", "Assertions", "Status", ""]}>
          {rules.map((r) => (
            <tr key={r.id}>
              <td>{r.name}</td>
              <td>{describeRuleTarget(r, names)}</td>
              <td className="num">{percent(r.sampleRate)}</td>
              <td>{r.assertions.map((a) => a.type.replace(/_/g, " ")).join(", ")}</td>
              <td>{r.enabled ? "enabled" : "paused"}</td>
              <td className="nowrap">
                <button type="button" className="secondary" onClick={() => setEditing(r)}>
                  Edit {r.name}
                </button>{" "}
                <ActButton
                  act={act}
                  className="secondary"
                  run={async () => {
                    await kiln.onlineRules.update(r.id, { enabled: !r.enabled });
                    reload();
                  }}
                >
                  {r.enabled ? "Pause" : "Enable"} {r.name}
                </ActButton>{" "}
                <ActButton
                  act={act}
                  className="secondary"
                  run={async () => {
                    await kiln.onlineRules.delete(r.id);
                    reload();
                  }}
                >
                  Delete {r.name}
                </ActButton>
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      {more && (
        <p className="list-end">
          <button type="button" className="secondary" onClick={() => void next()} disabled={loading}>
            {loading ? "Loading…" : "Load more rules"}
          </button>
        </p>
      )}
      {targets && (
        <RuleForm
          key={editing?.id ?? `new-${formKey}`}
          kiln={kiln}
          session={session}
          editing={editing}
          targets={targets}
          onSaved={saved}
          onCancel={() => setEditing(null)}
        />
      )}
      <OnlineScores kiln={kiln} session={session} rules={rules ?? []} navigate={navigate} />
    </main>
  );
}
