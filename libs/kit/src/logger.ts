import { type DestinationStream, type Logger, pino } from "pino";

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
export function createLogger(options: LoggerOptions, destination?: DestinationStream): Logger {
  const settings = {
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
        "*.token",
        "*.invitationToken",
      ],
      censor: "[redacted]",
    },
  };
  // Tests read what is logged from a stream of their own; everything else writes to stdout.
  return destination ? pino(settings, destination) : pino(settings);
}
