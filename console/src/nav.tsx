import type { Navigate } from "./router.js";
import { Link } from "./ui.js";

/**
 * The console's pages, grouped as a prompt team works: build, run, observe, look after the organization.
 * Each page is its path and its name, separated by the first space.
 */
const GROUPS = {
  Build: ["/prompts Prompts", "/tools Tools", "/skills Skills", "/agents Agents"],
  Run: ["/playground Playground", "/models Models"],
  Observe: [
    "/runs Runs",
    "/traces Traces",
    "/sessions Sessions",
    "/online-evaluation Online evaluation",
    "/review Review",
    "/datasets Datasets",
  ],
  Organization: [
    "/members Members",
    "/usage Usage",
    "/api-keys API keys",
    "/mcp-setup MCP",
    "/settings Settings",
    "/audit-log Audit log",
    "/transfer Export and import",
  ],
};

export const NAV_GROUPS = Object.entries(GROUPS).map(([name, pages]) => ({
  name,
  pages: pages.map((page) => {
    const space = page.indexOf(" ");
    return { path: page.slice(0, space), name: page.slice(space + 1) };
  }),
}));

const isCurrent = (path: string, page: string) => path === page || path.startsWith(`${page}/`);

/** The page of the navigation `path` belongs to ("/prompts" for "/prompts/p1"), if any. */
export function sectionOf(path: string): string | undefined {
  return NAV_GROUPS.flatMap((g) => g.pages).find((p) => isCurrent(path, p.path))?.path;
}

/** The main navigation: the groups with their pages, the current page marked. */
export function Nav({ path, navigate }: { path: string; navigate: Navigate }) {
  return (
    <nav id="main-nav" aria-label="Main">
      {NAV_GROUPS.map((group) => (
        <div key={group.name} className="nav-group">
          <h2>{group.name}</h2>
          <ul>
            {group.pages.map((p) => (
              <li key={p.path}>
                <Link to={p.path} navigate={navigate} current={isCurrent(path, p.path)}>
                  {p.name}
                </Link>
              </li>
            ))}
          </ul>
        </div>
      ))}
    </nav>
  );
}

/** An address the console has no page for. */
export function NotFound({ path, navigate }: { path: string; navigate: Navigate }) {
  return (
    <main className="narrow">
      <h1>Page not found</h1>
      <p>
        Nothing lives at <code>{path}</code>. It may have been moved, or the address was mistyped.
      </p>
      <p>
        <Link to="/prompts" navigate={navigate}>
          Go to your prompts
        </Link>
      </p>
    </main>
  );
}
