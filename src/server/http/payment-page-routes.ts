// The payment page's routes (payment-page/): the page of one order at its capability link, the same
// order's state for the page's live updates, the page's stylesheet and script, and a plain 404 page for
// any other link under /pay. Every read of a page or its state, good link or not, counts against the
// caller's address; a made-up link is refused before any query.
import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PaymentLinks } from '../payment-page/links.js';
import { pickLanguage, type Language } from '../payment-page/messages.js';
import { pageState, type PageOrder } from '../payment-page/order.js';
import { orderVersion, renderNotFound, renderOrder, renderPage, renderTooMany, type PageContext } from '../payment-page/render.js';
import type { Clock } from '../shared/time.js';
import type { RateLimiter } from './rate-limit.js';
import { staticAsset } from './static-asset.js';

/** Nothing from elsewhere: the page's own stylesheet, script and state requests, and the QR as a data: image. */
export const PAYMENT_PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const ASSETS = new URL('../payment-page/', import.meta.url);

export interface PaymentPageDeps {
  links: PaymentLinks;
  readOrder: (uuid: string) => Promise<PageOrder | undefined>;
  context: PageContext;
  /** Its own quota per caller's address, apart from the merchants' API quota. */
  rateLimiter: RateLimiter;
  now: Clock;
}

type PageRequest = FastifyRequest<{ Params: { uuid: string; token: string }; Querystring: { lang?: unknown } }>;

function language(request: FastifyRequest): Language {
  return pickLanguage((request.query as { lang?: unknown }).lang, request.headers['accept-language']);
}

/** no-store: the page is live, and its link is a capability that no shared cache should keep. */
function securityHeaders(reply: FastifyReply): FastifyReply {
  return reply.headers({
    'Content-Security-Policy': PAYMENT_PAGE_CSP,
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'X-Robots-Tag': 'noindex',
    'Cache-Control': 'no-store',
    Vary: 'Accept-Language',
  });
}

function html(reply: FastifyReply, status: number, body: string): FastifyReply {
  return securityHeaders(reply).code(status).type('text/html; charset=utf-8').send(body);
}

export function paymentPageRoutes(app: FastifyInstance, deps: PaymentPageDeps) {
  const asset = (name: string, type: string) =>
    staticAsset(type, () => readFileSync(new URL(name, ASSETS)), { 'Content-Security-Policy': PAYMENT_PAGE_CSP, 'X-Frame-Options': 'DENY' });
  app.get('/pay/page.css', asset('page.css', 'text/css; charset=utf-8'));
  app.get('/pay/page.js', asset('page.js', 'text/javascript; charset=utf-8'));

  /** The order behind a link; undefined when the answer was sent instead (429, 404). */
  async function orderOf(request: PageRequest, reply: FastifyReply): Promise<PageOrder | undefined> {
    const quota = deps.rateLimiter.take(`page:${request.ip}`);
    reply.headers(deps.rateLimiter.headers(quota));
    if (!quota.allowed) {
      html(reply, 429, renderTooMany(language(request), quota.resetSeconds));
      return undefined;
    }
    const { uuid, token } = request.params;
    const order = deps.links.verify(uuid, token) ? await deps.readOrder(uuid) : undefined;
    if (!order) html(reply, 404, renderNotFound(language(request)));
    return order;
  }

  app.get('/pay/:uuid/:token', async (request: PageRequest, reply) => {
    const order = await orderOf(request, reply);
    if (!order) return reply;
    return html(reply, 200, renderPage(order, language(request), deps.context, deps.now(), request.params.token));
  });

  // What page.js reads every second: the order's part of the page, rendered here as on the page.
  app.get('/pay/:uuid/:token/state', async (request: PageRequest, reply) => {
    const order = await orderOf(request, reply);
    if (!order) return reply;
    const now = deps.now();
    return securityHeaders(reply).type('application/json; charset=utf-8').send({
      state: pageState(order, now),
      version: orderVersion(order, now),
      html: renderOrder(order, language(request), deps.context, now),
    });
  });

  const notFound = async (request: FastifyRequest, reply: FastifyReply) => html(reply, 404, renderNotFound(language(request)));
  app.get('/pay', notFound);
  app.get('/pay/*', notFound);
}
