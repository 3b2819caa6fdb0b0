/**
 * The pieces of an OTLP/HTTP exporter's configuration every exporter reads the same way: an
 * endpoint URL (http or https) and headers as `key=value,key2=value2` with URL-encoded values (the
 * OpenTelemetry SDK's `OTEL_EXPORTER_OTLP_HEADERS` format). Problems are collected into `problems`
 * by variable name; a header's value (often a key) never appears in one.
 */

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** The URL of `text`, or undefined with a problem naming `name`. */
export function otlpUrlOf(name: string, text: string, problems: string[]): URL | undefined {
  try {
    const url = new URL(text);
    if (url.protocol === "http:" || url.protocol === "https:") return url;
  } catch {
    // Reported below.
  }
  problems.push(`${name} must be an http(s) URL`);
  return undefined;
}

/** The headers of `text` (`key=value` pairs separated by commas, names lower-cased). */
export function otlpHeadersOf(name: string, text: string, problems: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of text.split(",")) {
    if (pair.trim() === "") continue;
    const at = pair.indexOf("=");
    const key = at > 0 ? pair.slice(0, at).trim() : "";
    if (!HEADER_NAME.test(key)) {
      problems.push(`${name} must be key=value pairs separated by commas`);
      continue;
    }
    try {
      headers[key.toLowerCase()] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      problems.push(`${name}: the value of ${key} is not URL-encoded`);
    }
  }
  return headers;
}
