// The payment page's texts, in English and Russian. Amounts come in as decimal text of whole USDT
// (formatted exactly from smallest units), so no text here does arithmetic.
import type { Network } from '../shared/network.js';

export const LANGUAGES = ['en', 'ru'] as const;
export type Language = (typeof LANGUAGES)[number];

/** How long the address is still watched after expiry, as words ("7 days", "7 дней"). */
type Span = { days: number } | { hours: number } | { minutes: number };

export interface Messages {
  title: (network: Network) => string;
  networkName: Record<Network, string>;
  sandbox: string;
  states: {
    waiting: { heading: string; text: (minimum: string) => string };
    partial: { heading: string; text: (due: string) => string };
    /** `back`: the page shows the button back to the shop, else the payer is told the page can be closed. */
    done: { heading: string; text: (back: boolean) => string };
    expired: { heading: string; text: string; shortfall: (received: string, minimum: string, due: string) => string };
  };
  /** The one sentence about late payments, exactly as the platform credits them (deposits.ts, the watch window). */
  afterExpiry: (window: string, until: string) => string;
  payTo: string;
  purpose: string;
  payHeading: (network: Network) => string;
  seen: (amount: string, confirmations: number, required: number) => string;
  seenNote: string;
  payments: { heading: string; amount: string; time: string; transaction: string; simulated: string; explorer: (network: Network) => string; earlier: (count: number) => string };
  span: (span: Span) => string;
  minimum: string;
  received: string;
  due: string;
  timeLeft: string;
  expiresAt: string;
  network: string;
  token: string;
  tokenContract: string;
  warning: (network: Network, others: string) => string;
  /** The network's own coin the payer's wallet spends on the transfer's fee, beside the USDT (issue 57). */
  feeCoin: (network: Network) => string;
  copy: string;
  /** The button beside the amount to send (waiting: the minimum; partly paid: what is still due). */
  copyAmount: string;
  copied: string;
  qrAlt: string;
  noscript: string;
  reload: string;
  backToShop: string;
  language: string;
  notFound: { title: string; text: string };
  tooMany: { title: string; text: (seconds: number) => string };
}

const ru = new Intl.PluralRules('ru');
const ruPlural = (n: number, [one, few, many]: [string, string, string]) => {
  const form = ru.select(n);
  return `${n} ${form === 'one' ? one : form === 'few' ? few : many}`;
};
const enPlural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

const NETWORK_NAMES: Record<Network, string> = { Tron: 'Tron (TRC-20)', Ethereum: 'Ethereum (ERC-20)' };
/** The coin each network's transfer fee is paid in. */
const FEE_COINS: Record<Network, string> = { Tron: 'TRX', Ethereum: 'ETH' };

export const MESSAGES: Record<Language, Messages> = {
  en: {
    title: (network) => `Pay with USDT on ${network}`,
    networkName: NETWORK_NAMES,
    sandbox: 'Sandbox: a test page. Do not send real funds to this address.',
    states: {
      waiting: { heading: 'Waiting for your payment', text: (minimum) => `Send at least ${minimum} USDT to the address below.` },
      partial: { heading: 'Partly paid', text: (due) => `Send at least ${due} USDT more to the same address to complete it.` },
      done: { heading: 'Paid', text: (back) => `Your payment is complete. Thank you!${back ? '' : ' You can close this page.'}` },
      expired: {
        heading: 'This order has expired',
        text: 'The time to pay is over.',
        shortfall: (received, minimum, due) => `${received} USDT of the ${minimum} USDT minimum was received: ${due} USDT was still due at the deadline.`,
      },
    },
    afterExpiry: (window, until) =>
      `A payment that reaches this order's address on the chain by ${until} (${window} after the deadline) is still credited to the order, and completes it once the total reaches the minimum; ` +
      'one that arrives later is not credited automatically, so ask the shop before paying late.',
    payTo: 'Pay to',
    purpose: 'For',
    payHeading: (network) => `Send USDT on ${NETWORK_NAMES[network]} to this address`,
    seen: (amount, confirmations, required) => `Payment seen, confirming ${confirmations} of ${required}: ${amount} USDT`,
    seenNote: 'Counted once confirmed.',
    payments: {
      heading: 'Payments received',
      amount: 'Amount',
      time: 'Credited',
      transaction: 'Transaction',
      simulated: 'simulated in the sandbox, not on a chain: no explorer link',
      explorer: (network) => `on the ${network} block explorer`,
      earlier: (count) => `The ${count} payments before these are counted in the amount received.`,
    },
    span: (span) => ('days' in span ? enPlural(span.days, 'day') : 'hours' in span ? enPlural(span.hours, 'hour') : enPlural(span.minutes, 'minute')),
    minimum: 'Minimum to pay',
    received: 'Received so far',
    due: 'Still due',
    timeLeft: 'Time left',
    expiresAt: 'Deadline',
    network: 'Network',
    token: 'Token',
    tokenContract: 'Token contract',
    warning: (network, others) =>
      `Send only USDT on ${NETWORK_NAMES[network]}. Other tokens, and USDT on any other network (${others}), are not credited and may be lost.`,
    feeCoin: (network) =>
      `Your wallet also needs some ${FEE_COINS[network]} besides the USDT: the ${network} network charges its fee for the transfer in ${FEE_COINS[network]}, apart from the amount.`,
    copy: 'Copy address',
    copyAmount: 'Copy amount',
    copied: 'Copied',
    qrAlt: 'QR code of the address',
    noscript: 'This page updates itself when JavaScript is on.',
    reload: 'Reload to see payments received since it opened',
    backToShop: 'Back to the shop',
    language: 'Language',
    notFound: { title: 'Page not found', text: 'This payment link is not valid. Check the link, or ask the shop for a new one.' },
    tooMany: { title: 'Too many requests', text: (seconds) => `Please try again in ${seconds} s.` },
  },
  ru: {
    title: (network) => `Оплата в USDT в сети ${network}`,
    networkName: NETWORK_NAMES,
    sandbox: 'Песочница: тест. Не отправляйте сюда настоящие средства.',
    states: {
      waiting: { heading: 'Ожидаем оплату', text: (minimum) => `Отправьте не менее ${minimum} USDT на адрес ниже.` },
      partial: { heading: 'Оплачено частично', text: (due) => `Отправьте ещё не менее ${due} USDT на тот же адрес, чтобы завершить оплату.` },
      done: { heading: 'Оплачено', text: (back) => `Оплата завершена. Спасибо!${back ? '' : ' Эту страницу можно закрыть.'}` },
      expired: {
        heading: 'Срок заказа истёк',
        text: 'Время на оплату вышло.',
        shortfall: (received, minimum, due) => `Получено ${received} USDT из минимальных ${minimum} USDT: к сроку оставалось оплатить ${due} USDT.`,
      },
    },
    afterExpiry: (window, until) =>
      `Платёж, поступивший на адрес этого заказа в сети до ${until} (${window} после срока), всё равно зачисляется в заказ и завершает его, когда сумма достигнет минимума; ` +
      'поступивший позже автоматически не зачисляется, поэтому прежде чем платить с опозданием, свяжитесь с магазином.',
    payTo: 'Получатель',
    purpose: 'Назначение',
    payHeading: (network) => `Отправьте USDT в сети ${NETWORK_NAMES[network]} на этот адрес`,
    seen: (amount, confirmations, required) => `Платёж замечен, подтверждений ${confirmations} из ${required}: ${amount} USDT`,
    seenNote: 'Зачтётся после подтверждения.',
    payments: {
      heading: 'Полученные платежи',
      amount: 'Сумма',
      time: 'Зачислен',
      transaction: 'Транзакция',
      simulated: 'имитация в песочнице, не в сети: ссылки на обозреватель нет',
      explorer: (network) => `в обозревателе блоков ${network}`,
      earlier: (count) => `Предыдущие платежи (${count}) учтены в полученной сумме.`,
    },
    span: (span) =>
      'days' in span ? ruPlural(span.days, ['дня', 'дней', 'дней'])
      : 'hours' in span ? ruPlural(span.hours, ['часа', 'часов', 'часов'])
      : ruPlural(span.minutes, ['минуты', 'минут', 'минут']),
    minimum: 'Минимальная сумма',
    received: 'Получено',
    due: 'Осталось оплатить',
    timeLeft: 'Осталось',
    expiresAt: 'Срок оплаты',
    network: 'Сеть',
    token: 'Токен',
    tokenContract: 'Контракт токена',
    warning: (network, others) =>
      `Отправляйте только USDT в сети ${NETWORK_NAMES[network]}. Другие токены и USDT в любой другой сети (${others}) не зачисляются и могут быть потеряны.`,
    feeCoin: (network) =>
      `Кроме USDT, в кошельке нужно немного ${FEE_COINS[network]}: комиссию за перевод сеть ${network} берёт в ${FEE_COINS[network]}, отдельно от суммы.`,
    copy: 'Скопировать адрес',
    copyAmount: 'Копировать сумму',
    copied: 'Скопировано',
    qrAlt: 'QR-код адреса',
    noscript: 'С включённым JavaScript страница обновляется сама.',
    reload: 'Обновите страницу, чтобы увидеть поступившие платежи',
    backToShop: 'Вернуться в магазин',
    language: 'Язык',
    notFound: { title: 'Страница не найдена', text: 'Эта ссылка на оплату недействительна. Проверьте ссылку или попросите у магазина новую.' },
    tooMany: { title: 'Слишком много запросов', text: (seconds) => `Попробуйте снова через ${seconds} с.` },
  },
};

/** The watch window in the largest whole unit. */
export function watchSpan(seconds: number): Span {
  if (seconds % 86_400 === 0) return { days: seconds / 86_400 };
  if (seconds % 3600 === 0) return { hours: seconds / 3600 };
  return { minutes: Math.ceil(seconds / 60) };
}

/** The `lang` parameter if it names a language of the page, else the first of Accept-Language that does, else English. */
export function pickLanguage(lang: unknown, acceptLanguage: string | undefined): Language {
  if (typeof lang === 'string' && (LANGUAGES as readonly string[]).includes(lang)) return lang as Language;
  const ranked = (acceptLanguage ?? '')
    .split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
      return { primary: tag.trim().toLowerCase().split('-')[0]!, q: q === undefined ? 1 : Number(q), index };
    })
    .filter((entry) => entry.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  return (ranked.find((entry) => (LANGUAGES as readonly string[]).includes(entry.primary))?.primary as Language | undefined) ?? 'en';
}
