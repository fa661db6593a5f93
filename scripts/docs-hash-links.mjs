#!/usr/bin/env node
// The docs page's links as they work in a new tab (part of `npm run docs`, issue 49). Redoc routes in the
// URL's fragment (/docs#/section/errors), but the page Redocly prerenders writes its menu's links as
// paths from the root (href="/section/errors"), and React keeps a prerendered attribute when it takes the
// page over: a link opened in a new tab, or copied, led to /section/errors, which the platform does not
// serve. Each such link is written with its fragment route instead (href="#/section/errors"), which is
// what Redoc itself writes once it renders a menu item again; a click works as before.
import { readFileSync, writeFileSync } from 'node:fs';

const file = process.argv[2] ?? 'dist/docs/index.html';
const html = readFileSync(file, 'utf8');
// href="/…" but not a protocol-relative href="//host/…".
const ROOT_LINK = /href="\/(?!\/)/g;
const count = html.match(ROOT_LINK)?.length ?? 0;
// The menu alone holds a dozen (the guide's sections and the tags): none means Redocly's markup changed.
if (count < 10) throw new Error(`${file}: ${count} links from the root (href="/…") where the menu has at least 10; has Redocly's prerendered markup changed?`);
writeFileSync(file, html.replace(ROOT_LINK, 'href="#/'));
