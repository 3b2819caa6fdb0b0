/**
 * Functions' own lines (docs/architecture.md "Measuring the structure"): the lines a function spans
 * less those of the functions nested in it, which are counted on their own, so that a builder made
 * of small callbacks is not long and one long callback is. Functions are found with the TypeScript
 * compiler's parser: declarations, expressions, arrows, methods, accessors and constructors.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";

const isFunction = (node) =>
  ts.isFunctionDeclaration(node) ||
  ts.isFunctionExpression(node) ||
  ts.isArrowFunction(node) ||
  ts.isMethodDeclaration(node) ||
  ts.isConstructorDeclaration(node) ||
  ts.isGetAccessorDeclaration(node) ||
  ts.isSetAccessorDeclaration(node);

const textOf = (name, source) =>
  name && (ts.isIdentifier(name) || ts.isStringLiteral(name)) ? name.text : name?.getText(source);

/** What a function is called where it is written: its name, its variable's or property's, or the call it is passed to. */
function nameOf(node, source) {
  if (ts.isConstructorDeclaration(node)) return `${textOf(node.parent.name, source) ?? "(class)"}.constructor`;
  if (node.name) {
    const owner = ts.isClassLike(node.parent) ? `${textOf(node.parent.name, source) ?? "(class)"}.` : "";
    return owner + textOf(node.name, source);
  }
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) {
    return textOf(parent.name, source);
  }
  if (ts.isCallExpression(parent)) return `(callback of ${parent.expression.getText(source).slice(0, 40)})`;
  return "(anonymous)";
}

const kindOf = (file) =>
  file.endsWith(".tsx") ? ts.ScriptKind.TSX : /\.m?js$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS;

/** Each function of one file: where it starts, its name, and its own lines. */
export function functionsOf(root, file) {
  const text = readFileSync(join(root, file), "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kindOf(file));
  const lineOf = (position) => source.getLineAndCharacterOfPosition(position).line;
  const found = [];
  /** The lines `node` spans; each function found below it records its own. */
  const visit = (node, enclosing) => {
    if (isFunction(node)) {
      const [first, last] = [lineOf(node.getStart(source)), lineOf(node.getEnd())];
      const own = { file, line: first + 1, name: nameOf(node, source), lines: new Set() };
      for (let line = first; line <= last; line++) own.lines.add(line);
      // A nested function's lines are its own, not its parent's.
      if (enclosing) for (const line of own.lines) enclosing.lines.delete(line);
      found.push(own);
      ts.forEachChild(node, (child) => visit(child, own));
      return;
    }
    ts.forEachChild(node, (child) => visit(child, enclosing));
  };
  visit(source, undefined);
  return found.map(({ lines, ...rest }) => ({ ...rest, ownLines: lines.size }));
}

/** The functions of `files` with more than `limit` own lines, longest first. */
export function longFunctions(root, files, limit = 80) {
  return files
    .filter((file) => /\.(ts|tsx|mjs|js)$/.test(file))
    .flatMap((file) => functionsOf(root, file))
    .filter((f) => f.ownLines > limit)
    .sort((a, b) => b.ownLines - a.ownLines || a.file.localeCompare(b.file));
}
