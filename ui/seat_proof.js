// The proof of a real browser before a seat is made (rag_metrics/server/proof.py): find a counter
// such that SHA-256("<challenge>.<counter>") starts with BITS zero bits, keep the answer in a
// short-lived cookie and reload; the server then checks it (once) and makes the seat.
// crypto.subtle where the page is a secure context (HTTPS, localhost); the same hash in plain
// JavaScript elsewhere (a class on http://<lan address>).  ui/identity.py fills in the values.
(function () {
  var C = __CHALLENGE__, BITS = __BITS__, NAME = __NAME__, AGE = __AGE__;
  var P = window.parent, D = P.document, out = document.getElementById("m");
  function say(t) { if (out) { out.textContent = t; } }
  function zeros(b) {
    var n = 0;
    for (var i = 0; i < b.length; i++) {
      var x = b[i];
      if (x === 0) { n += 8; continue; }
      while (!(x & 0x80)) { n++; x <<= 1; }
      break;
    }
    return n;
  }
  // a page that keeps failing (cookies refused, a proxy changing the address) stops after 3 tries
  var TRIES = "rml_proof_tries", now = Date.now(), tries = 0;
  try {
    var kept = (P.sessionStorage.getItem(TRIES) || "0:0").split(":");
    tries = now - (+kept[1]) < 120000 ? +kept[0] : 0;
  } catch (e) { tries = 0; }
  if (tries >= 3) {
    say("This browser could not prove itself 3 times: allow cookies for this site, then reload the page.");
    return;
  }
  var t0 = now;
  function done(i) {
    var s = P.location.protocol === "https:" ? "; Secure" : "";
    D.cookie = NAME + "=" + C + "." + i + "; path=/; max-age=" + AGE + "; SameSite=Strict" + s;
    if (D.cookie.indexOf(NAME + "=") < 0) { say("This browser keeps no cookies for this site: allow them and reload."); return; }
    try { P.sessionStorage.setItem(TRIES, (tries + 1) + ":" + Date.now()); } catch (e) { /* no storage: no limit */ }
    say("Done in " + ((Date.now() - t0) / 1000).toFixed(1) + " s; opening your seat…");
    P.location.reload();
  }
  // ---- SHA-256 in plain JavaScript (FIPS 180-4) over an ASCII string -------------------------
  var K = [0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2];
  var W = new Int32Array(64);
  function sha256(s) {
    var len = s.length, blocks = ((len + 8) >> 6) + 1, m = new Int32Array(blocks * 16), i, j;
    for (i = 0; i < len; i++) { m[i >> 2] |= (s.charCodeAt(i) & 0xff) << (24 - (i & 3) * 8); }
    m[len >> 2] |= 0x80 << (24 - (len & 3) * 8);
    m[blocks * 16 - 1] = len * 8;
    var h0 = 0x6a09e667, h1 = 0xbb67ae85, h2 = 0x3c6ef372, h3 = 0xa54ff53a,
      h4 = 0x510e527f, h5 = 0x9b05688c, h6 = 0x1f83d9ab, h7 = 0x5be0cd19;
    for (j = 0; j < blocks * 16; j += 16) {
      var a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, h = h7;
      for (i = 0; i < 64; i++) {
        if (i < 16) { W[i] = m[j + i]; } else {
          var x = W[i - 15], y = W[i - 2];
          W[i] = (((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3)) + W[i - 16] +
            (((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10)) + W[i - 7];
        }
        var t1 = h + (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))) +
          ((e & f) ^ (~e & g)) + K[i] + W[i];
        var t2 = (((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))) +
          ((a & b) ^ (a & c) ^ (b & c));
        h = g; g = f; f = e; e = (d + t1) | 0; d = c; c = b; b = a; a = (t1 + t2) | 0;
      }
      h0 = (h0 + a) | 0; h1 = (h1 + b) | 0; h2 = (h2 + c) | 0; h3 = (h3 + d) | 0;
      h4 = (h4 + e) | 0; h5 = (h5 + f) | 0; h6 = (h6 + g) | 0; h7 = (h7 + h) | 0;
    }
    var hs = [h0, h1, h2, h3, h4, h5, h6, h7], out8 = new Uint8Array(32);
    for (i = 0; i < 8; i++) {
      out8[i * 4] = hs[i] >>> 24; out8[i * 4 + 1] = (hs[i] >>> 16) & 0xff;
      out8[i * 4 + 2] = (hs[i] >>> 8) & 0xff; out8[i * 4 + 3] = hs[i] & 0xff;
    }
    return out8;
  }
  if (typeof module !== "undefined") { module.exports = { sha256: sha256, zeros: zeros }; return; }
  // ---- the search: crypto.subtle in batches, else the plain hash in slices of the event loop ----
  var counter = 0, BATCH = 512, subtle = window.isSecureContext && window.crypto && window.crypto.subtle;
  if (subtle) {
    var enc = new TextEncoder();
    (function batch() {
      var work = [];
      for (var k = 0; k < BATCH; k++) { work.push(subtle.digest("SHA-256", enc.encode(C + "." + (counter + k)))); }
      Promise.all(work).then(function (ds) {
        for (var k = 0; k < ds.length; k++) { if (zeros(new Uint8Array(ds[k])) >= BITS) { done(counter + k); return; } }
        counter += BATCH;
        batch();
      });
    })();
  } else {
    (function slice() {
      for (var k = 0; k < 20000; k++, counter++) { if (zeros(sha256(C + "." + counter)) >= BITS) { done(counter); return; } }
      setTimeout(slice, 0);
    })();
  }
})();
