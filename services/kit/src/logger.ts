import { type Logger, pino } from "pino";

export type { Logger };

export interface LoggerOptions {
  level: string;
  /** Component name in every line, e.g. "identity". */
  name: string;
}

/**
 * Structured JSON logs. Credentials never reach a line: the paths below are censored wherever a
 * caller passes headers or bodies along.
 */
export function createLogger(options: LoggerOptions): Logger {
  return pino({
    name: options.name,
    level: options.level,
    redact: {
      paths: [
        "req.headers.authorization",
        "req.headers['x-api-key']",
        "headers.authorization",
        "headers['x-api-key']",
        "*.password",
        "*.key",
        "*.secret",
        "*.accessToken",
      ],
      censor: "[redacted]",
    },
  });
}
