import type { AnyValue, KeyValue } from "@kiln/proto/otlp/common";

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** An OTLP value as JSON: 64-bit integers beyond 2^53 stay exact as decimal strings, bytes as base64. */
export function anyValueToJson(value: AnyValue | undefined): JsonValue {
  const v = value?.value;
  switch (v?.case) {
    case "stringValue":
    case "boolValue":
    case "doubleValue":
      return v.value;
    case "intValue":
      return Number.isSafeInteger(Number(v.value)) ? Number(v.value) : v.value.toString();
    case "bytesValue":
      return Buffer.from(v.value).toString("base64");
    case "arrayValue":
      return v.value.values.map(anyValueToJson);
    case "kvlistValue":
      return attributesToJson(v.value.values);
    default:
      return null;
  }
}

/** Attributes as one JSON object, every key kept as it came (a repeated key: the last one wins). */
export function attributesToJson(attributes: readonly KeyValue[]): Record<string, JsonValue> {
  const out: Record<string, JsonValue> = {};
  for (const a of attributes) out[a.key] = anyValueToJson(a.value);
  return out;
}

export const hexOf = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex");

/** OTLP's nanoseconds since the epoch as a Date (millisecond precision). */
export const dateOfNanos = (nanos: bigint): Date => new Date(Number(nanos / 1_000_000n));
