// pt2lab's service worker: keeps the versioned files of this build (listed by
// scripts/build_web.sh, which also writes the version) in a cache, so the page
// opens and works with the network gone. Cache first for the site's own files;
// a new build gets a new cache and the old one is deleted.
"use strict";
var VERSION = "__PT2LAB_VERSION__";
var FILES = __PT2LAB_FILES__;
var CACHE = "pt2lab-" + VERSION;

self.addEventListener("install", function (e) {
  e.waitUntil(caches.open(CACHE).then(function (c) { return c.addAll(FILES); })
    .then(function () { return self.skipWaiting(); }));
});

self.addEventListener("activate", function (e) {
  e.waitUntil(caches.keys().then(function (keys) {
    return Promise.all(keys.filter(function (k) { return k.indexOf("pt2lab-") === 0 && k !== CACHE; })
      .map(function (k) { return caches.delete(k); }));
  }).then(function () { return self.clients.claim(); }));
});

self.addEventListener("fetch", function (e) {
  var req = e.request;
  if (req.method !== "GET" || new URL(req.url).origin !== self.location.origin) return;
  // The page itself under any query (?file=..., ?step=...) is index.html.
  var nav = req.mode === "navigate";
  e.respondWith(caches.open(CACHE).then(function (c) {
    return c.match(nav ? "./" : req, { ignoreSearch: nav }).then(function (hit) {
      if (hit) return hit;
      // A font page (fonts/more/XX.otf) is not kept at install: it is kept once a
      // character needed it, so it is there offline the next time.
      var page = /\/fonts\/more\/[0-9a-f]{2}\.otf$/.test(new URL(req.url).pathname);
      return fetch(req).then(function (res) {
        if (page && res.ok) c.put(req, res.clone());
        return res;
      });
    });
  }));
});
