/** `tsx gateway/scripts/write-openapi.ts <file>`: writes the OpenAPI document (see buildOpenApiDocument). */
import { writeFile } from "node:fs/promises";
import { buildOpenApiDocument } from "../src/openapi-document.js";

const target = process.argv[2];
if (!target) {
  process.stderr.write("usage: write-openapi.ts <output file>\n");
  process.exit(2);
}
await writeFile(target, `${JSON.stringify(await buildOpenApiDocument(), null, 2)}\n`);
