import type { Kiln } from "@kiln/sdk";
import { useCallback, useEffect, useState } from "react";
import type { Session } from "./api.js";

export type Navigate = (path: string) => void;

/** What every page of the signed-in console is given. */
export interface PageProps {
  kiln: Kiln;
  session: Session;
  navigate: Navigate;
}

/** The path of the page, kept in step with the history (back and forward included). */
export function usePath(): [string, Navigate] {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const onPop = () => setPath(location.pathname);
    addEventListener("popstate", onPop);
    return () => removeEventListener("popstate", onPop);
  }, []);
  // The same function on every render: effects may depend on it.
  const navigate = useCallback<Navigate>((to) => {
    if (to !== `${location.pathname}${location.search}`) history.pushState(null, "", to);
    // The page is the path; a query (the playground's `open`) is read by the page itself.
    setPath(to.split("?")[0] ?? to);
    scrollTo(0, 0);
  }, []);
  return [path, navigate];
}
