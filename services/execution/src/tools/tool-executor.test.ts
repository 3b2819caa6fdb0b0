import { describe, expect, it } from "vitest";
import { createToolExecutor, type ExecutableTool } from "./tool-executor.js";

const CITY_SCHEMA = {
  type: "object",
  properties: {
    city: { type: "string", minLength: 1 },
    days: { type: "integer", minimum: 1 },
    unit: { enum: ["c", "f"] },
    when: { type: "string", format: "date" },
    stops: { type: "array", items: { type: "object", properties: { name: { type: "string" } } } },
  },
  required: ["city"],
  additionalProperties: false,
};

function stub(config: unknown, inputSchema: unknown = CITY_SCHEMA): ExecutableTool {
  return { toolKey: "weather", toolVersionId: "tv_1", type: "manual_stub", config, inputSchema };
}

function fixedClock(...times: number[]) {
  return () => times.shift() ?? 0;
}

describe("createToolExecutor: manual_stub", () => {
  it("returns a copy of config.result and the latency from the clock", async () => {
    const config = { result: { temperature: 21, tags: ["sunny"], __proto__: { kept: true } } };
    const executor = createToolExecutor({ allowlist: { hosts: [] }, now: fixedClock(1_000, 1_012.4) });
    const result = await executor.execute(stub(JSON.parse(JSON.stringify(config))), { city: "Oslo" });
    expect(result).toEqual({ output: { temperature: 21, tags: ["sunny"] }, latencyMs: 12 });
    const parsed = JSON.parse('{"result":{"__proto__":{"kept":true},"n":1}}');
    const own = await executor.execute(stub(parsed), { city: "Oslo" });
    expect(JSON.stringify(own.output)).toBe('{"__proto__":{"kept":true},"n":1}');
  });

  it("never hands out the stored result itself", async () => {
    const config = { result: { list: [1, 2] } };
    const executor = createToolExecutor({ allowlist: { hosts: [] } });
    const first = await executor.execute(stub(config), { city: "Oslo" });
    (first.output as { list: number[] }).list.push(3);
    const second = await executor.execute(stub(config), { city: "Oslo" });
    expect(second.output).toEqual({ list: [1, 2] });
    expect(config.result.list).toEqual([1, 2]);
  });

  it("reports a config without an object result", async () => {
    const executor = createToolExecutor({ allowlist: { hosts: [] } });
    for (const config of [{}, { result: [1] }, { result: "x" }, null]) {
      const result = await executor.execute(stub(config), { city: "Oslo" });
      expect(result.error).toMatchObject({ code: "invalid_tool_config" });
      expect(result.output).toBeNull();
    }
  });
});

describe("createToolExecutor: input", () => {
  it("returns invalid input as a tool error that names every problem", async () => {
    const executor = createToolExecutor({ allowlist: { hosts: [] } });
    const result = await executor.execute(stub({ result: {} }), {
      days: 0,
      unit: "k",
      when: "tomorrow",
      stops: [{ name: 5 }],
      extra: true,
    });
    expect(result.output).toBeNull();
    expect(result.error?.code).toBe("invalid_tool_input");
    expect(result.error?.details).toEqual([
      { field: "input.city", issue: "is required" },
      { field: "input.extra", issue: "is not allowed" },
      { field: "input.days", issue: "must be >= 1" },
      { field: "input.unit", issue: 'must be one of "c", "f"' },
      { field: "input.when", issue: 'must match format "date"' },
      { field: "input.stops[0].name", issue: "must be string" },
    ]);
    expect(result.error?.message).toBe(
      "the input does not match the tool's inputSchema: input.city is required; input.extra is not allowed; " +
        'input.days must be >= 1; input.unit must be one of "c", "f"; input.when must match format "date"; ' +
        "input.stops[0].name must be string",
    );
  });

  it("accepts valid input, including formats", async () => {
    const executor = createToolExecutor({ allowlist: { hosts: [] } });
    const result = await executor.execute(stub({ result: { ok: true } }), { city: "Oslo", when: "2026-01-31" });
    expect(result).toMatchObject({ output: { ok: true } });
    expect(result.error).toBeUndefined();
  });

  it("keeps schemas with the same $id apart", async () => {
    const executor = createToolExecutor({ allowlist: { hosts: [] } });
    const a = { $id: "https://x.test/input", type: "object", required: ["a"] };
    const b = { $id: "https://x.test/input", type: "object", required: ["b"] };
    expect((await executor.execute(stub({ result: {} }, a), { a: 1 })).error).toBeUndefined();
    expect((await executor.execute(stub({ result: {} }, b), { b: 1 })).error).toBeUndefined();
    expect((await executor.execute(stub({ result: {} }, b), { a: 1 })).error?.code).toBe("invalid_tool_input");
  });

  it("reports an input schema that does not compile as a config problem", async () => {
    const executor = createToolExecutor({ allowlist: { hosts: [] } });
    const result = await executor.execute(stub({ result: {} }, { type: "object", $ref: "#/$defs/missing" }), {});
    expect(result.error?.code).toBe("invalid_tool_config");
    expect(result.error?.message).toMatch(/^the tool's inputSchema cannot be used/);
  });

  it("reports an unknown tool type", async () => {
    const executor = createToolExecutor({ allowlist: { hosts: [] } });
    const tool = { ...stub({ result: {} }), type: "python" };
    expect((await executor.execute(tool, { city: "Oslo" })).error).toEqual({
      code: "invalid_tool_config",
      message: 'unknown tool type "python"',
    });
  });

  it("rejects with the caller's reason when the signal is already aborted", async () => {
    const executor = createToolExecutor({ allowlist: { hosts: [] } });
    const reason = new Error("run cancelled");
    await expect(
      executor.execute(stub({ result: {} }), { city: "Oslo" }, { signal: AbortSignal.abort(reason) }),
    ).rejects.toBe(reason);
  });
});
