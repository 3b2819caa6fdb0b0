import type { Kiln } from "@kiln/sdk";
import { type ReactNode, useCallback, useState } from "react";
import { useAction, useLoaded } from "./action.js";
import type { PageProps } from "./router.js";
import { Empty, ErrorBox, Field, Link, Loading } from "./ui.js";

/** What every versioned resource (prompt, skill, agent) shows in a list: a name and where it stands. */
export interface ListedResource {
  id: string;
  name: string;
  publishedVersionId: string | null;
}

/** The part of an SDK family client the list page uses. */
export interface ListingClient<T extends ListedResource> {
  list(query: { organizationId: string; limit: number }): PromiseLike<{ data: T[] }>;
  create(input: { organizationId: string; name: string }): Promise<{ id: string }>;
}

/** How one family fills the shared list page: its words, its path, and the line shown per item. */
export interface FamilyList<T extends ListedResource> {
  /** The family's client, picked from the SDK. */
  client: (kiln: Kiln) => ListingClient<T>;
  /** The singular noun ("skill"): with an "s", the plural, for headings, ids and loading text, and the path (`/skills`). */
  noun: string;
  /** The name field's label. */
  nameLabel: string;
  /** What the page says when the organization has none. */
  emptyText: string;
  /** Items filtered by a search field, with what to say when none match. */
  search?: { noneMatch: string };
  /** What follows the item's link. */
  summary?: (item: T) => ReactNode;
}

const draftOrPublished = (item: ListedResource): ReactNode => (item.publishedVersionId ? "published" : "draft");
const capital = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);

/** The list page of a family, as the router mounts it. */
export function listPage<T extends ListedResource>(family: FamilyList<T>) {
  return (props: PageProps) => <ResourceList family={family} {...props} />;
}

/** The list page of a versioned-resource family: create one by name, search, open one. */
export function ResourceList<T extends ListedResource>({
  family,
  kiln,
  session,
  navigate,
}: PageProps & { family: FamilyList<T> }) {
  const [query, setQuery] = useState("");
  const [name, setName] = useState("");
  const { error, setError, submit } = useAction();
  const client = family.client(kiln);
  const organizationId = session.organizationId ?? "";
  const read = useCallback(
    async () => (await client.list({ organizationId, limit: 200 })).data,
    [client, organizationId],
  );
  const items = useLoaded(read, setError).value;
  const create = submit(async () => {
    const created = await client.create({ organizationId, name });
    navigate(`/${family.noun}s/${created.id}`);
  });
  const { noun } = family;
  const plural = `${noun}s`;
  const shown = family.search
    ? (items ?? []).filter((item) => item.name.toLowerCase().includes(query.toLowerCase()))
    : (items ?? []);
  const summary = family.summary ?? draftOrPublished;
  return (
    <main>
      <h1>{capital(plural)}</h1>
      <div className="columns">
        <section className="card" aria-labelledby={`new-${noun}`}>
          <h2 id={`new-${noun}`}>New {noun}</h2>
          <form onSubmit={create} noValidate>
            <Field label={family.nameLabel} value={name} onChange={setName} issue={error?.fields.name} required />
            <ErrorBox error={error && !error.fields.name ? error : null} />
            <button type="submit">Create {noun}</button>
          </form>
        </section>
        <section aria-labelledby={`all-${plural}`}>
          <h2 id={`all-${plural}`}>All {plural}</h2>
          {family.search && <Field label={`Search ${plural}`} type="search" value={query} onChange={setQuery} />}
          <Listed
            items={items && shown}
            what={plural}
            empty={items?.length === 0 || !family.search ? family.emptyText : family.search.noneMatch}
          >
            {(shown) => (
              <LinkList
                items={shown}
                to={(item) => `/${plural}/${item.id}`}
                label={(item) => item.name}
                summary={summary}
                navigate={navigate}
              />
            )}
          </Listed>
        </section>
      </div>
    </main>
  );
}

/** A list as it loads: that it is loading (`null`), what to say when it is empty, else `children` of the items. */
export function Listed<T>({
  items,
  what,
  empty,
  children,
}: {
  items: T[] | null;
  what: string;
  empty: ReactNode;
  children: (items: T[]) => ReactNode;
}) {
  if (items === null) return <Loading what={what} />;
  if (items.length === 0) return <Empty>{empty}</Empty>;
  return children(items);
}

/** Items as links to their pages, each followed by what `summary` says of it. */
export function LinkList<T extends { id: string }>({
  items,
  to,
  label,
  summary,
  navigate,
}: {
  items: T[];
  to: (item: T) => string;
  label: (item: T) => ReactNode;
  summary: (item: T) => ReactNode;
  navigate: (path: string) => void;
}) {
  return (
    <ul>
      {items.map((item) => (
        <li key={item.id}>
          <Link to={to(item)} navigate={navigate}>
            {label(item)}
          </Link>{" "}
          {summary(item)}
        </li>
      ))}
    </ul>
  );
}
