// Applies routersim's two fixes to an installed @portkey-ai/gateway 1.15.2 (idempotent; fails
// loudly when the text to patch is not found, e.g. another release):
//
// 1. async-retry 1.3.3: the gateway's own `patches/async-retry+1.3.3.patch`, which its
//    `postinstall: patch-package` applies in the gateway's repository but not from the
//    published package (patch-package and patches/ are not shipped). It passes the retry
//    operation to the attempt (`fn(bail, num, op)`); without it `use_retry_after_header: true`
//    throws `Cannot set properties of undefined (setting '_timeouts')`.
// 2. build/start-server.js: on Node 20, a streamed answer's Response has immutable headers
//    and ResponseService.create's updateHeaders() throws `TypeError: immutable` (upstream
//    issues #1389 and #1550): every stream fails with 500. The fix copies the Response
//    (`new Response(body, response)`: same status, body stream and headers, now mutable)
//    before the headers are set.
//
// Usage: node tools/portkey/patch.cjs PREFIX   (the npm --prefix the gateway is installed in)
'use strict';
const fs = require('fs');
const path = require('path');

const prefix = process.argv[2] || 'target/portkey';
const modules = path.join(prefix, 'node_modules');

const patches = [
  {
    file: path.join(modules, 'async-retry', 'lib', 'index.js'),
    from: 'val = fn(bail, num);',
    to: 'val = fn(bail, num, op);',
  },
  {
    file: path.join(modules, '@portkey-ai', 'gateway', 'build', 'start-server.js'),
    from: 'this.updateHeaders(i,n.cacheStatus,o),{response:i',
    to: 'i=new Response(i.body,i),this.updateHeaders(i,n.cacheStatus,o),{response:i',
  },
];

for (const { file, from, to } of patches) {
  const text = fs.readFileSync(file, 'utf8');
  if (text.split(to).length === 2) {
    console.log(`patched already: ${file}`);
    continue;
  }
  const found = text.split(from).length - 1;
  if (found !== 1) {
    console.error(`${file}: expected ${JSON.stringify(from)} once, found it ${found} times`);
    process.exit(1);
  }
  fs.writeFileSync(file, text.replace(from, to));
  console.log(`patched: ${file}`);
}
