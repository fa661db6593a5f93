// The payment page as HTML, rendered on the server in full: with JavaScript off it shows every fact,
// and with it on page.js swaps in the same server-rendered part (renderOrder) when the order changes,
// so there is one rendering of the state, not one here and another in the browser.
import { toChecksumAddress, toTronAddress, type Network } from '../addresses/derivation.js';
import { USDT_CONTRACTS, type Config } from '../config.js';
import { formatDecimalUnits } from '../shared/money.js';
import { MESSAGES, LANGUAGES, watchSpan, type Language, type Messages } from './messages.js';
import { pageState, type PageOrder, type PageState } from './order.js';
import { platformDateTime } from '../shared/time.js';

/** What the page says about the platform rather than the order. */
export interface PageContext {
  sandbox: boolean;
  /** The token contract per network as the network writes addresses (Tron base58, Ethereum EIP-55). */
  tokenContracts: Record<Network, string>;
  watchWindowSeconds: number;
}

/** The page's context from the platform's settings: each network's token contract is the one it scans (or would). */
export function pageContext(config: Pick<Config, 'mode' | 'networks' | 'watchWindowSeconds'>): PageContext {
  const shown = (network: Network) => {
    const id = Buffer.from((config.networks[network].chain?.tokenContract ?? USDT_CONTRACTS[network]).slice(2), 'hex');
    return network === 'Tron' ? toTronAddress(id) : toChecksumAddress(id);
  };
  return {
    sandbox: config.mode === 'sandbox',
    tokenContracts: { Tron: shown('Tron'), Ethereum: shown('Ethereum') },
    watchWindowSeconds: config.watchWindowSeconds,
  };
}

/** Networks where USDT also lives, named in the warning against sending on the wrong one. */
const OTHER_NETWORKS: Record<Network, string> = {
  Tron: 'Ethereum, BNB Smart Chain, Polygon, Solana, TON',
  Ethereum: 'Tron, BNB Smart Chain, Polygon, Arbitrum, Solana, TON',
};

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escape = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

const usdt = (units: bigint) => `${formatDecimalUnits(units)} USDT`;

/** Time left as h:mm:ss or m:ss, as page.js counts it down. */
export function formatRemaining(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const [h, m, s] = [Math.floor(total / 3600), Math.floor((total % 3600) / 60), total % 60];
  const two = (n: number) => String(n).padStart(2, '0');
  return h > 0 ? `${h}:${two(m)}:${two(s)}` : `${m}:${two(s)}`;
}

/** The API's date shape (expiredAt), in UTC. */
const deadline = (ms: number) => `${platformDateTime(new Date(ms))} UTC`;

/** The QR PNG's own side in pixels (its IHDR width), so the image takes its place before it decodes. */
function qrSide(dataUrl: string): number {
  return Buffer.from(dataUrl.slice('data:image/png;base64,'.length, 'data:image/png;base64,'.length + 32), 'base64').readUInt32BE(16);
}

/** Changes exactly when what the page shows of the order changes (not with the clock's seconds). */
export function orderVersion(order: PageOrder, now: number): string {
  return `${pageState(order, now)}.${order.receivedAmount}`;
}

const fact = (term: string, value: string, id?: string) => `<div><dt>${term}</dt><dd${id ? ` id="${id}"` : ''}>${value}</dd></div>`;

function stateSection(t: Messages, state: PageState, order: PageOrder, context: PageContext): string {
  const text =
    state === 'waiting' ? t.states.waiting.text(formatDecimalUnits(order.minAmount))
    : state === 'partial' ? t.states.partial.text(formatDecimalUnits(order.minAmount - order.receivedAmount))
    : t.states[state].text;
  const after = state === 'expired' ? `<p>${escape(t.afterExpiry(t.span(watchSpan(context.watchWindowSeconds))))}</p>` : '';
  return `<section class="state state-${state}" role="status"><h2>${escape(t.states[state].heading)}</h2><p>${escape(text)}</p>${after}</section>`;
}

function payingSection(t: Messages, order: PageOrder): string {
  const side = qrSide(order.addressQr);
  return (
    `<section class="pay" aria-labelledby="address-heading">` +
    `<p class="warning">${escape(t.warning(order.blockchain, OTHER_NETWORKS[order.blockchain]))}</p>` +
    `<h2 id="address-heading">${escape(t.address)}</h2>` +
    `<p class="address"><code id="address">${escape(order.address)}</code></p>` +
    `<button type="button" class="copy" data-copy="address" data-copied="${escape(t.copied)}" hidden>${escape(t.copy)}</button>` +
    `<img class="qr" src="${escape(order.addressQr)}" alt="${escape(t.qrAlt)}" width="${side}" height="${side}">` +
    `</section>`
  );
}

/** The part of the page that follows the order: what page.js replaces when the order changes. */
export function renderOrder(order: PageOrder, language: Language, context: PageContext, now: number): string {
  const t = MESSAGES[language];
  const state = pageState(order, now);
  const paying = state === 'waiting' || state === 'partial';
  const facts = [
    fact(t.network, escape(t.networkName[order.blockchain])),
    fact(t.token, 'USDT'),
    fact(t.tokenContract, `<code>${escape(context.tokenContracts[order.blockchain])}</code>`),
    fact(t.minimum, usdt(order.minAmount)),
    fact(t.received, usdt(order.receivedAmount), 'received'),
    paying ? fact(t.due, usdt(order.receivedAmount < order.minAmount ? order.minAmount - order.receivedAmount : 0n), 'due') : '',
    paying ? fact(t.timeLeft, `<span id="countdown">${formatRemaining(order.expiresAt - now)}</span>`) : '',
    fact(t.expiresAt, deadline(order.expiresAt)),
  ];
  return (
    (context.sandbox ? `<p class="sandbox">${escape(t.sandbox)}</p>` : '') +
    `<h1>${escape(t.title(order.blockchain))}</h1>` +
    stateSection(t, state, order, context) +
    `<dl class="facts">${facts.join('')}</dl>` +
    (paying ? payingSection(t, order) : '') +
    (order.returnUrl ? `<p><a class="back" href="${escape(order.returnUrl)}" rel="noreferrer">${escape(t.backToShop)}</a></p>` : '') +
    `<noscript><p>${escape(t.noscript)} <a href="">${escape(t.reload)}</a>.</p></noscript>`
  );
}

/** `mainAttributes` is set for an order's page only: it alone loads the stylesheet and the script. */
function htmlDocument(language: Language, title: string, main: string, mainAttributes?: string): string {
  const t = MESSAGES[language];
  const links = LANGUAGES.map(
    (code) => `<a href="?lang=${code}" hreflang="${code}" lang="${code}"${code === language ? ' aria-current="page"' : ''}>${code === 'en' ? 'English' : 'Русский'}</a>`,
  ).join(' ');
  // The stylesheet and the script are relative to the page (/pay/<uuid>/<token>), so a proxy may mount it under a prefix.
  return (
    `<!doctype html><html lang="${language}"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex">` +
    `<title>${escape(title)}</title><link rel="icon" href="data:,">` +
    (mainAttributes === undefined ? '' : `<link rel="stylesheet" href="../../pay/page.css"><script src="../../pay/page.js" defer></script>`) +
    `</head><body><main id="order"${mainAttributes ?? ''}>${main}</main>` +
    `<footer><nav aria-label="${escape(t.language)}">${links}</nav></footer></body></html>`
  );
}

/** The whole page of one order. */
export function renderPage(order: PageOrder, language: Language, context: PageContext, now: number, token: string): string {
  const attributes =
    ` data-state="${pageState(order, now)}" data-version="${orderVersion(order, now)}" data-expires="${order.expiresAt}"` +
    ` data-poll="${escape(`${token}/state?lang=${language}`)}"`;
  return htmlDocument(language, MESSAGES[language].title(order.blockchain), renderOrder(order, language, context, now), attributes);
}

/** A plain page for an unknown or malformed link: it says nothing about any order. */
export function renderNotFound(language: Language): string {
  const { title, text } = MESSAGES[language].notFound;
  return htmlDocument(language, title, `<h1>${escape(title)}</h1><p>${escape(text)}</p>`);
}

export function renderTooMany(language: Language, seconds: number): string {
  const { title, text } = MESSAGES[language].tooMany;
  return htmlDocument(language, title, `<h1>${escape(title)}</h1><p>${escape(text(seconds))}</p>`);
}
