import { jsonBytes } from "@kiln/kit/limits";

/** `make(pad)` with `pad` long enough that the value's JSON text is exactly `bytes` bytes (docs/api.md "Limits"). */
export function sized<T>(bytes: number, make: (pad: string) => T): T {
  return make("a".repeat(bytes - jsonBytes(make(""))));
}
