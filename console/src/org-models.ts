import type { Kiln, Model } from "@kiln/sdk";
import { useEffect, useState } from "react";
import { readRoutes, routeModelIds } from "./model-routes.js";

/** The models the organization can run: the deployment's and its own connections' (GET /api/models). */
export const readOrganizationModels = async (kiln: Kiln, organizationId: string | undefined): Promise<Model[]> =>
  (await kiln.models.list(organizationId ? { organizationId } : {})).data;

/**
 * What a version or a playground run may name as its model in the organization: the models
 * (the deployment's and its connections') and its routes (`route/<name>`). A read that fails
 * (a member the routes' list refuses) leaves that part empty: the picker still offers the rest.
 */
export function useRunnableModels(kiln: Kiln, organizationId: string | undefined) {
  const [models, setModels] = useState<Model[]>([]);
  const [routes, setRoutes] = useState<string[]>([]);
  useEffect(() => {
    let live = true;
    readOrganizationModels(kiln, organizationId).then(
      (m) => live && setModels(m),
      () => live && setModels([]),
    );
    if (organizationId)
      readRoutes(organizationId).then(
        (r) => live && setRoutes(routeModelIds(r)),
        () => live && setRoutes([]),
      );
    return () => {
      live = false;
    };
  }, [kiln, organizationId]);
  return { models, routes };
}
