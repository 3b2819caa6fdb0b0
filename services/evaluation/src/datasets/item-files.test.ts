import { describe, expect, it } from "vitest";
import { itemsOfFile } from "./item-files.js";
import { checkNewItems } from "./new-items.js";

describe("itemsOfFile", () => {
  it("reads CSV columns as variables, expected_output and metadata.* apart, JSON cells as values", () => {
    const csv =
      '\ufeffname,notes,expectedOutput,metadata.tier\r\n"Lovelace, Ada","line one\nline two","{""ok"":true}",gold\r\n\r\nGrace,,,\r\n';
    expect(itemsOfFile("csv", csv)).toEqual({
      items: [
        {
          input: { name: "Lovelace, Ada", notes: "line one\nline two" },
          expectedOutput: { ok: true },
          metadata: { tier: "gold" },
        },
        { input: { name: "Grace", notes: "" }, expectedOutput: undefined },
      ],
      issues: [],
    });
  });

  it("names the row, the column and the line of a bad cell, and refuses a bad header", () => {
    const { issues } = itemsOfFile("csv", 'a,expected_output\n1,ok\n2,"[1,"\n');
    expect(issues).toEqual([{ field: "rows[1].expected_output", issue: "is not valid JSON (line 3)" }]);
    expect(itemsOfFile("csv", "a,a\n1,2\n").issues).toEqual([{ field: "columns[1]", issue: "repeats the column a" }]);
    expect(itemsOfFile("csv", "a,expected_output,expectedOutput\n1,2,3\n").issues[0]?.field).toBe("columns");
    expect(itemsOfFile("csv", "a\n").issues).toEqual([{ field: "content", issue: "holds a header and no rows" }]);
    expect(itemsOfFile("csv", 'a,b\n"1,2\n').issues[0]).toMatchObject({ field: "content", issue: /^is not CSV/ });
    expect(itemsOfFile("csv", "  \n").issues).toEqual([{ field: "content", issue: "holds no rows" }]);
  });

  it("reads JSONL objects, skipping blank lines, and names bad lines by row and line", () => {
    const ok = itemsOfFile(
      "jsonl",
      '{"input":{"a":1},"expected_output":"x"}\n\n{"input":{"b":2},"expectedOutput":null}\n',
    );
    expect(ok).toEqual({ items: [{ input: { a: 1 }, expectedOutput: "x" }, { input: { b: 2 } }], issues: [] });
    const bad = itemsOfFile("jsonl", '{"input":{}}\n[1]\n\nnope\n{"input":{},"other":1}\n');
    expect(bad.issues).toEqual([
      { field: "rows[1]", issue: "is not a JSON object (line 2)" },
      { field: "rows[2]", issue: "is not valid JSON (line 4)" },
      { field: "rows[3].other", issue: "is not allowed (line 5)" },
    ]);
  });
});

describe("checkNewItems", () => {
  it("refuses an input that is no object, metadata that is no object and values past their limits", () => {
    const big = "x".repeat(256 * 1024);
    const { items, issues } = checkNewItems([
      { input: { a: 1 } },
      { input: [1] },
      { input: {}, metadata: "m" },
      { input: { big } },
      { input: {}, expectedOutput: "\u0000" },
    ]);
    expect(items).toEqual([]);
    expect(issues).toEqual([
      { field: "items[1].input", issue: "must be a JSON object" },
      { field: "items[2].metadata", issue: "must be a JSON object" },
      { field: "items[3].input", issue: "must be at most 256 KiB as JSON" },
      { field: "items[4].expectedOutput", issue: "must not contain NUL characters" },
    ]);
  });

  it("keeps JSON as text, no expected output and no metadata as null, and bounds the batch", () => {
    expect(checkNewItems([{ input: { a: 1 }, expectedOutput: 0 }]).items).toEqual([
      { inputJson: '{"a":1}', expectedOutputJson: "0", metadataJson: null, source: null },
    ]);
    expect(checkNewItems([]).issues).toEqual([{ field: "items", issue: "must hold at least one item" }]);
    const many = Array.from({ length: 1001 }, () => ({ input: {} }));
    expect(checkNewItems(many).issues).toEqual([{ field: "items", issue: "must hold at most 1000 items" }]);
  });
});
