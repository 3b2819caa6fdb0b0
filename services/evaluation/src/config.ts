import { BusEnv, parseEnv, ServiceEnv, Type } from "@kiln/kit/config";

export const EvaluationEnv = Type.Object({
  ...ServiceEnv,
  ...BusEnv,
  PORT: Type.Integer({ minimum: 0, maximum: 65_535, default: 7004 }),
  MONGODB_DATABASE: Type.String({ minLength: 1, default: "kiln_evaluation" }),
  IDENTITY_URL: Type.String({ minLength: 1 }),
});

/** The only reader of the environment in the evaluation service. */
export function loadConfig(env: Record<string, string | undefined> = process.env) {
  return parseEnv(EvaluationEnv, env);
}
