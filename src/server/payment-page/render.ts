// The payment page as HTML, rendered on the server in full: with JavaScript off it shows every fact,
// and with it on page.js swaps in the same server-rendered part (renderOrder) when the order changes,
// so there is one rendering of the state, not one here and another in the browser.
import { toChecksumAddress, toTronAddress } from '../addresses/derivation.js';
import type { Network } from '../shared/network.js';
import type { Config } from '../config.js';
import { formatDecimalUnits } from '../shared/money.js';
import { MESSAGES, LANGUAGES, watchSpan, type Language, type Messages } from './messages.js';
import { pageState, type PageOrder, type PageState } from './order.js';
import { platformDateTime } from '../shared/time.js';

/** What the page says about the platform rather than the order. */
export interface PageContext {
  sandbox: boolean;
  /** Each network's block explorer page of a transaction, `{txId}` in it (TRON_EXPLORER_TX_URL, …). */
  explorerTxUrls: Record<Network, string>;
  /** The token contract per network as the network writes addresses (Tron base58, Ethereum EIP-55). */
  tokenContracts: Record<Network, string>;
  watchWindowSeconds: number;
}

/** The page's context from the platform's settings: each network's token contract is the one it scans (or would). */
export function pageContext(config: Pick<Config, 'mode' | 'networks' | 'watchWindowSeconds' | 'explorerTxUrls'>): PageContext {
  const shown = (network: Network) => {
    const id = Buffer.from(config.networks[network].tokenContract.slice(2), 'hex');
    return network === 'Tron' ? toTronAddress(id) : toChecksumAddress(id);
  };
  return {
    sandbox: config.mode === 'sandbox',
    explorerTxUrls: config.explorerTxUrls,
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
  const seen = (order.unconfirmed ?? []).map((u) => `${u.amount}x${u.confirmations}`).join('-');
  return `${pageState(order, now)}.${order.receivedAmount}.${order.paymentCount}${seen ? `.${seen}` : ''}`;
}

const fact = (term: string, value: string, id?: string) => `<div><dt>${term}</dt><dd${id ? ` id="${id}"` : ''}>${value}</dd></div>`;

/** What is still due: nothing once the minimum is reached. */
const dueOf = (order: PageOrder) => (order.receivedAmount < order.minAmount ? order.minAmount - order.receivedAmount : 0n);

/** Where the amount goes in a text, before the text is escaped. */
const AMOUNT_MARK = '\u0000';

/**
 * What to send and by when, in the first screen (issue 49): the time left beside the state's heading,
 * counted down by page.js, and the amount with its copy button (hidden until page.js shows it). The
 * countdown is a timer (no live region of its own): the state's status region does not announce each second.
 */
function amountAndTime(t: Messages, state: PageState, text: (amount: string) => string, amount: bigint, expiresAt: number, now: number): string {
  const sentence = escape(text(AMOUNT_MARK)).replace(AMOUNT_MARK, `<strong id="amount">${formatDecimalUnits(amount)}</strong>`);
  return (
    `<div class="state-head"><h2>${escape(t.states[state].heading)}</h2>` +
    `<p class="time-left">${escape(t.timeLeft)}: <strong id="countdown" role="timer">${formatRemaining(expiresAt - now)}</strong></p></div>` +
    `<p>${sentence} <button type="button" class="copy-amount" data-copy="amount" data-copied="${escape(t.copied)}" hidden>${escape(t.copyAmount)}</button></p>`
  );
}

function stateSection(t: Messages, state: PageState, order: PageOrder, context: PageContext, now: number): string {
  const paragraphs =
    state === 'waiting' || state === 'partial' ? []
    : state === 'done' ? [t.states.done.text(order.returnUrl !== null)]
    : [
        t.states.expired.text +
          (order.receivedAmount > 0n ? ` ${t.states.expired.shortfall(formatDecimalUnits(order.receivedAmount), formatDecimalUnits(order.minAmount), formatDecimalUnits(dueOf(order)))}` : ''),
        t.afterExpiry(t.span(watchSpan(context.watchWindowSeconds)), deadline(order.expiresAt + context.watchWindowSeconds * 1000)),
      ];
  // Transfers on the chain, not confirmed yet: the payer sees the payment was noticed.
  const seen = (order.unconfirmed ?? [])
    .map((u) => `<li>${escape(t.seen(formatDecimalUnits(u.amount), Math.min(u.confirmations, u.requiredConfirmations), u.requiredConfirmations))}</li>`)
    .join('');
  // After payment, the way back to the shop comes first (item 6 of issue 35): the payer is done here.
  const back = state === 'done' && order.returnUrl ? backLink(t, order.returnUrl, true) : '';
  const payable =
    state === 'waiting' ? amountAndTime(t, state, t.states.waiting.text, order.minAmount, order.expiresAt, now)
    : state === 'partial' ? amountAndTime(t, state, t.states.partial.text, dueOf(order), order.expiresAt, now)
    : `<h2>${escape(t.states[state].heading)}</h2>`;
  return (
    `<section class="state state-${state}" role="status">` +
    payable +
    paragraphs.map((text) => `<p>${escape(text)}</p>`).join('') +
    (seen ? `<ul class="seen">${seen}</ul><p class="seen-note">${escape(t.seenNote)}</p>` : '') +
    back +
    `</section>`
  );
}

function backLink(t: Messages, returnUrl: string, primary: boolean): string {
  return `<p><a class="back${primary ? ' primary' : ''}" href="${escape(returnUrl)}" rel="noreferrer">${escape(t.backToShop)}</a></p>`;
}

/** The QR code, the address and its copy button, under a heading that names the network and the token. */
function payingSection(t: Messages, order: PageOrder): string {
  const side = qrSide(order.addressQr);
  return (
    `<section class="pay" aria-labelledby="address-heading">` +
    `<h2 id="address-heading">${escape(t.payHeading(order.blockchain))}</h2>` +
    `<div class="pay-grid">` +
    `<img class="qr" src="${escape(order.addressQr)}" alt="${escape(t.qrAlt)}" width="${side}" height="${side}">` +
    `<div class="pay-address"><p class="address"><code id="address">${escape(order.address)}</code></p>` +
    `<button type="button" class="copy" data-copy="address" data-copied="${escape(t.copied)}" hidden>${escape(t.copy)}</button></div>` +
    `</div>` +
    `<p class="warning">${escape(t.warning(order.blockchain, OTHER_NETWORKS[order.blockchain]))}</p>` +
    `<p class="fee-coin">${escape(t.feeCoin(order.blockchain))}</p>` +
    `</section>`
  );
}

/** Whom the payer pays, and for what: only what the operator and the merchant chose to show. */
function payee(t: Messages, order: PageOrder): string {
  const rows = [
    order.merchantName === null ? '' : fact(t.payTo, escape(order.merchantName), 'merchant'),
    order.description === null ? '' : fact(t.purpose, escape(order.description), 'description'),
  ].join('');
  return rows ? `<dl class="payee">${rows}</dl>` : '';
}

/** Each credited payment: amount, time and transaction, linked to the network's explorer unless simulated. */
function paymentsSection(t: Messages, order: PageOrder, context: PageContext): string {
  if (order.payments.length === 0) return '';
  const items = order.payments.map((payment) => {
    const id = `<code>${escape(payment.txId)}</code>`;
    const transaction = payment.simulated
      ? `${id} <span class="note">(${escape(t.payments.simulated)})</span>`
      : `<a href="${escape(context.explorerTxUrls[order.blockchain].replace('{txId}', encodeURIComponent(payment.txId)))}" rel="noreferrer" target="_blank">${id}<span class="visually-hidden"> ${escape(t.payments.explorer(order.blockchain))}</span></a>`;
    return (
      `<li><dl>` +
      fact(t.payments.amount, usdt(payment.amount)) +
      fact(t.payments.time, `<time datetime="${new Date(payment.at).toISOString()}">${deadline(payment.at)}</time>`) +
      fact(t.payments.transaction, transaction) +
      `</dl></li>`
    );
  });
  const earlier = order.paymentCount - order.payments.length;
  return (
    `<section class="payments" aria-labelledby="payments-heading"><h2 id="payments-heading">${escape(t.payments.heading)}</h2>` +
    (earlier > 0 ? `<p>${escape(t.payments.earlier(earlier))}</p>` : '') +
    `<ol>${items.join('')}</ol></section>`
  );
}

/** The part of the page that follows the order: what page.js replaces when the order changes. */
export function renderOrder(order: PageOrder, language: Language, context: PageContext, now: number): string {
  const t = MESSAGES[language];
  const state = pageState(order, now);
  const paying = state === 'waiting' || state === 'partial';
  const owing = paying || (state === 'expired' && order.receivedAmount > 0n);
  const facts = [
    fact(t.network, escape(t.networkName[order.blockchain])),
    fact(t.token, 'USDT'),
    fact(t.tokenContract, `<code>${escape(context.tokenContracts[order.blockchain])}</code>`),
    fact(t.minimum, usdt(order.minAmount)),
    fact(t.received, usdt(order.receivedAmount), 'received'),
    owing ? fact(t.due, usdt(dueOf(order)), 'due') : '',
    // A paid order has no deadline left to meet (issue 57): shown, it read as one still running.
    state === 'done' ? '' : fact(t.expiresAt, deadline(order.expiresAt)),
  ];
  return (
    (context.sandbox ? `<p class="sandbox">${escape(t.sandbox)}</p>` : '') +
    `<h1>${escape(t.title(order.blockchain))}</h1>` +
    payee(t, order) +
    stateSection(t, state, order, context, now) +
    (paying ? payingSection(t, order) : '') +
    `<dl class="facts">${facts.join('')}</dl>` +
    paymentsSection(t, order, context) +
    (order.returnUrl && state !== 'done' ? backLink(t, order.returnUrl, false) : '') +
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
