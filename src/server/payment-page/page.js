// The payment page's behaviour with JavaScript on: a copy button, the countdown, and the order read
// again every second (every five once it is paid or expired), its server-rendered part swapped in when
// it changed. Without JavaScript the page shows the same facts and is reloaded by hand.
'use strict';
(() => {
  const main = document.getElementById('order');
  if (!main || !main.dataset.poll) return;
  const expiresAt = Number(main.dataset.expires);
  const two = (n) => String(n).padStart(2, '0');

  // As render.ts formatRemaining: h:mm:ss, or m:ss under an hour.
  function remaining(ms) {
    const total = Math.max(0, Math.floor(ms / 1000));
    const h = Math.floor(total / 3600);
    const m = Math.floor((total % 3600) / 60);
    return h > 0 ? `${h}:${two(m)}:${two(total % 60)}` : `${m}:${two(total % 60)}`;
  }

  function tick() {
    const countdown = document.getElementById('countdown');
    if (countdown) countdown.textContent = remaining(expiresAt - Date.now());
  }

  function enhance() {
    for (const button of document.querySelectorAll('[data-copy]')) button.hidden = false;
    tick();
  }

  document.addEventListener('click', async (event) => {
    const button = event.target instanceof Element ? event.target.closest('[data-copy]') : null;
    if (!button) return;
    const source = document.getElementById(button.dataset.copy);
    const label = button.textContent;
    try {
      await navigator.clipboard.writeText(source.textContent);
      button.textContent = button.dataset.copied;
      setTimeout(() => (button.textContent = label), 2000);
    } catch {
      // No clipboard (an insecure origin, a refused permission): select the address for a manual copy.
      getSelection().selectAllChildren(source);
    }
  });

  async function poll() {
    let delay = ['waiting', 'partial'].includes(main.dataset.state) ? 1000 : 5000;
    try {
      const response = await fetch(main.dataset.poll, { cache: 'no-store', headers: { Accept: 'application/json' } });
      if (response.status === 404) return;
      if (response.status === 429) delay = Math.max(1, Number(response.headers.get('Retry-After')) || 5) * 1000;
      if (response.ok) {
        const body = await response.json();
        if (body.version !== main.dataset.version) {
          main.innerHTML = body.html;
          main.dataset.version = body.version;
          main.dataset.state = body.state;
          enhance();
        }
      }
    } catch {
      delay = 5000; // offline for a moment: try again
    }
    setTimeout(poll, delay);
  }

  enhance();
  setInterval(tick, 1000);
  setTimeout(poll, 1000);
})();
