/** What the background parts need of a logger: pino's (Fastify's) shape, structured fields first. */
export interface Logger {
  info?(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}
