/**
 * Stands in, for the type checker only, for @xmldom/xmldom 0.8's declarations, which pull the DOM
 * library into every program that imports them (`/// <reference lib="dom" />`), and with it the
 * browser's ReadableStream and Headers in place of Node's. Kiln never calls xmldom itself: only
 * the SAML libraries do (@node-saml/node-saml in the gateway, samlify in the test IdP).
 */
declare const DOMParser: new (options?: unknown) => { parseFromString(source: string, mimeType?: string): unknown };
declare const XMLSerializer: new () => { serializeToString(node: unknown): string };
declare const DOMImplementation: new () => unknown;
type Document = unknown;
type Element = unknown;
type Node = unknown;

export { DOMImplementation, DOMParser, type Document, type Element, type Node, XMLSerializer };
