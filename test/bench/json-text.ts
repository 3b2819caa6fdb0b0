/**
 * `pnpm bench:json-text`: why free-form user JSON travels as `kiln.common.v1.JsonText` (its text)
 * and not as `google.protobuf.Struct`/`Value` (docs/architecture.md "Free-form JSON on the wire").
 * One ~620 KB document (8 000 rows, close to the 1 MiB body limit) is encoded and decoded both ways,
 * BENCH_JSON_ROUNDS (default 20) times each; prints time per operation, the heap a decoded message
 * keeps alive, and the ratio Struct ÷ JsonText. Run with `node --expose-gc` for steady heap figures
 * (the script asks for it itself).
 */
import { create, fromBinary, fromJson, toBinary, toJson } from "@bufbuild/protobuf";
import { StructSchema } from "@bufbuild/protobuf/wkt";
import { JsonTextSchema } from "@kiln/proto/common";

const ROUNDS = Number(process.env.BENCH_JSON_ROUNDS ?? 20);
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const doc = {
  rows: Array.from({ length: 8000 }, (_, i) => ({
    id: i,
    name: `row ${i}`,
    tags: ["a", "b"],
    score: i / 3,
    ok: i % 2 === 0,
  })),
};
const text = JSON.stringify(doc);

/** The JS heap plus the bytes of ArrayBuffers (where encoded messages live). */
function heapAndBuffers(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

function measure(fn: () => unknown): { ms: number; keptKiB: number } {
  gc();
  const before = heapAndBuffers();
  const kept: unknown[] = [];
  const start = performance.now();
  for (let i = 0; i < ROUNDS; i++) kept.push(fn());
  const ms = (performance.now() - start) / ROUNDS;
  gc();
  const keptKiB = (heapAndBuffers() - before) / ROUNDS / 1024;
  if (kept.length !== ROUNDS) throw new Error("unreachable");
  return { ms, keptKiB };
}

const textWire = toBinary(JsonTextSchema, create(JsonTextSchema, { json: text }));
const structWire = toBinary(StructSchema, fromJson(StructSchema, doc));
const rows: [string, () => unknown, () => unknown][] = [
  [
    "encode (value → wire)",
    () => toBinary(JsonTextSchema, create(JsonTextSchema, { json: JSON.stringify(doc) })),
    () => toBinary(StructSchema, fromJson(StructSchema, doc)),
  ],
  ["decode (wire → message)", () => fromBinary(JsonTextSchema, textWire), () => fromBinary(StructSchema, structWire)],
  [
    "decode and read (wire → value)",
    () => JSON.parse(fromBinary(JsonTextSchema, textWire).json),
    () => toJson(StructSchema, fromBinary(StructSchema, structWire)),
  ],
];
console.log(
  `document: ${Buffer.byteLength(text)} bytes of JSON; wire: JsonText ${textWire.length}, Struct ${structWire.length} bytes`,
);
for (const [label, asText, asStruct] of rows) {
  const t = measure(asText);
  const s = measure(asStruct);
  console.log(
    `${label}: JsonText ${t.ms.toFixed(2)} ms, keeps ${t.keptKiB.toFixed(0)} KiB; Struct ${s.ms.toFixed(2)} ms, keeps ${s.keptKiB.toFixed(0)} KiB; Struct ÷ JsonText time ${(s.ms / t.ms).toFixed(1)}×, heap ${(s.keptKiB / Math.max(t.keptKiB, 1)).toFixed(1)}×`,
  );
}
