// The payment page's rendering as functions of an order (no server, no browser): what each state says,
// the merchant and the description escaped, the payments with their explorer links, the transfers seen
// and not yet confirmed, and the version that tells page.js to swap the page in.
import { describe, expect, it } from 'vitest';
import type { PageOrder } from '../../../src/server/payment-page/order.js';
import { orderVersion, renderOrder, type PageContext } from '../../../src/server/payment-page/render.js';

const NOW = Date.parse('2026-11-27T12:00:00Z');
// A 1×1 PNG: enough for the QR's size to be read from its header.
const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

const context: PageContext = {
  sandbox: false,
  explorerTxUrls: { Tron: 'https://tronscan.org/#/transaction/{txId}', Ethereum: 'https://etherscan.io/tx/{txId}' },
  tokenContracts: { Tron: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', Ethereum: '0xdAC17F958D2ee523a2206206994597C13D831ec7' },
  watchWindowSeconds: 7 * 86_400,
};

function order(overrides: Partial<PageOrder> = {}): PageOrder {
  return {
    uuid: '0b9a6f1e-3c2d-4e5f-8a7b-6c5d4e3f2a1b',
    blockchain: 'Ethereum',
    address: '0x52908400098527886E0F7030069857D2E4169EE7',
    addressQr: PNG,
    status: 'NEW',
    minAmount: 10_000_000n,
    receivedAmount: 0n,
    expiresAt: NOW + 3600_000,
    returnUrl: null,
    merchantName: null,
    description: null,
    payments: [],
    paymentCount: 0,
    ...overrides,
  };
}

const TX = `0x${'5c'.repeat(32)}`;

describe('the payment page rendered', () => {
  it('names the merchant and the description as text, and nothing when there are none', () => {
    const html = renderOrder(order({ merchantName: 'Acme <Tickets>', description: '<script>alert("x")</script> & co' }), 'en', context, NOW);
    expect(html).toContain('<dt>Pay to</dt><dd id="merchant">Acme &lt;Tickets&gt;</dd>');
    expect(html).toContain('<dt>For</dt><dd id="description">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; co</dd>');
    expect(html).not.toContain('<script>');
    expect(renderOrder(order(), 'en', context, NOW)).not.toContain('class="payee"');
  });

  it('puts the heading that names network and token, the QR code and the address before the facts', () => {
    const html = renderOrder(order(), 'en', context, NOW);
    expect(html).toContain('<h2 id="address-heading">Send USDT on Ethereum (ERC-20) to this address</h2>');
    expect(html.indexOf('img class="qr"')).toBeLessThan(html.indexOf('class="facts"'));
    expect(html.indexOf('id="address"')).toBeLessThan(html.indexOf('class="facts"'));
  });

  it("lists each payment, a chain one linked to the network's explorer, a simulated one not", () => {
    const payments = [
      { txId: TX, amount: 4_000_000n, at: Date.parse('2026-11-27T11:30:00Z'), simulated: false },
      { txId: 'ab'.repeat(32), amount: 1_000_000n, at: Date.parse('2026-11-27T11:40:05Z'), simulated: true },
    ];
    const html = renderOrder(order({ receivedAmount: 5_000_000n, payments, paymentCount: 2 }), 'en', context, NOW);
    expect(html).toContain(`<a href="https://etherscan.io/tx/${TX}" rel="noreferrer" target="_blank"><code>${TX}</code><span class="visually-hidden"> on the Ethereum block explorer</span></a>`);
    expect(html).toContain('<time datetime="2026-11-27T11:30:00.000Z">2026-11-27 11:30:00 UTC</time>');
    expect(html).toContain(`<code>${'ab'.repeat(32)}</code> <span class="note">(simulated in the sandbox, not on a chain: no explorer link)</span>`);
    expect(html.match(/<a href="https:\/\/etherscan/g)).toHaveLength(1);
    // More payments than the page lists: the others are said to be counted.
    expect(renderOrder(order({ receivedAmount: 5_000_000n, payments, paymentCount: 52 }), 'en', context, NOW)).toContain('The 50 payments before these are counted in the amount received.');
    const tron = renderOrder(order({ blockchain: 'Tron', receivedAmount: 1n, payments: [{ ...payments[0]!, txId: 'cd'.repeat(32) }], paymentCount: 1 }), 'ru', context, NOW);
    expect(tron).toContain(`href="https://tronscan.org/#/transaction/${'cd'.repeat(32)}"`);
    expect(tron).toContain('в обозревателе блоков Tron');
  });

  it('says "payment seen, confirming n of m" for each transfer not yet confirmed, in both languages', () => {
    const unconfirmed = [{ txId: TX, amount: 2_500_000n, confirmations: 3, requiredConfirmations: 12 }];
    const en = renderOrder(order({ unconfirmed }), 'en', context, NOW);
    expect(en).toContain('<ul class="seen"><li>Payment seen, confirming 3 of 12: 2.5 USDT</li></ul>');
    expect(en).toContain('Counted once confirmed.');
    expect(renderOrder(order({ unconfirmed }), 'ru', context, NOW)).toContain('<li>Платёж замечен, подтверждений 3 из 12: 2.5 USDT</li>');
    expect(renderOrder(order({ unconfirmed: [] }), 'en', context, NOW)).not.toContain('class="seen"');
    expect(renderOrder(order(), 'en', context, NOW)).not.toContain('class="seen"');
    // Each new confirmation changes the version, so an open page shows it.
    const versions = [0, 3, 4].map((confirmations) => orderVersion(order({ unconfirmed: confirmations ? [{ ...unconfirmed[0]!, confirmations }] : [] }), NOW));
    expect(new Set(versions).size).toBe(3);
  });

  it('on an expired, partly paid order: received and due, and one sentence on late payments that matches the watch window', () => {
    const expired = order({ status: 'EXPIRED', expiresAt: NOW - 60_000, receivedAmount: 4_000_000n, payments: [], paymentCount: 1 });
    const html = renderOrder(expired, 'en', context, NOW);
    expect(html).toContain('<dt>Received so far</dt><dd id="received">4 USDT</dd>');
    expect(html).toContain('<dt>Still due</dt><dd id="due">6 USDT</dd>');
    expect(html).toContain('4 USDT of the 10 USDT minimum was received: 6 USDT was still due at the deadline.');
    expect(html).toContain("A payment that reaches this order&#39;s address on the chain by 2026-12-04 11:59:00 UTC (7 days after the deadline) is still credited");
    expect(html).not.toMatch(/do not send/i);
    expect(html).not.toContain('id="address"');
    // Nothing received: no shortfall sentence, no due line.
    const none = renderOrder(order({ status: 'EXPIRED', expiresAt: NOW - 60_000 }), 'en', context, NOW);
    expect(none).not.toContain('id="due"');
    expect(none).not.toContain('minimum was received');
  });

  it('after payment, leads back to the shop with a primary button, or says the page can be closed', () => {
    const done = order({ status: 'DONE', receivedAmount: 10_000_000n });
    const back = renderOrder({ ...done, returnUrl: 'https://merchant.example/o/1?a=1&b=2' }, 'en', context, NOW);
    expect(back).toContain('<a class="back primary" href="https://merchant.example/o/1?a=1&amp;b=2" rel="noreferrer">Back to the shop</a>');
    expect(back).toContain('Your payment is complete. Thank you!</p>');
    expect(back.indexOf('back primary')).toBeLessThan(back.indexOf('class="facts"'));
    const close = renderOrder(done, 'ru', context, NOW);
    expect(close).toContain('Оплата завершена. Спасибо! Эту страницу можно закрыть.');
    expect(close).not.toContain('class="back');
  });

  it('tells the payer the network charges its fee in its own coin, and shows a paid order no deadline (issue 57)', () => {
    expect(renderOrder(order(), 'en', context, NOW)).toContain(
      '<p class="fee-coin">Your wallet also needs some ETH besides the USDT: the Ethereum network charges its fee for the transfer in ETH, apart from the amount.</p>',
    );
    expect(renderOrder(order({ blockchain: 'Tron' }), 'ru', context, NOW)).toContain('<p class="fee-coin">Кроме USDT, в кошельке нужно немного TRX: комиссию за перевод сеть Tron берёт в TRX, отдельно от суммы.</p>');
    expect(renderOrder(order(), 'en', context, NOW)).toContain('<dt>Deadline</dt>');
    const done = renderOrder(order({ status: 'DONE', receivedAmount: 10_000_000n }), 'en', context, NOW);
    expect(done).not.toContain('Deadline');
    expect(done).not.toContain('class="fee-coin"'); // nothing left to send
  });
});
