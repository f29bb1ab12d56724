// pt2lab's service worker: keeps the versioned files of this build (listed by
// scripts/build_web.sh, which also writes the version) in a cache, so the page
// opens and works with the network gone. Cache first for the site's own files;
// a new build gets a new cache and the old one is deleted.
//
// A teacher's course (?course=PATH/, docs/LESSONS.md "Hosting a course") is kept
// too, in a cache of its own that outlives builds: the files under the course
// folder of the page that asks for them (index.json, the lesson files, the
// graphs), network first so an edited course shows at once, from the cache
// when the network is gone. Whenever its index.json is seen (on a first visit,
// when this worker activates under the page), every file the index lists that is
// not kept yet is fetched, and the font pages its lessons' characters need, so
// every lesson of the course opens offline.
"use strict";
var VERSION = "__PT2LAB_VERSION__";
var FILES = __PT2LAB_FILES__;
var CACHE = "pt2lab-" + VERSION;
var COURSE_CACHE = "pt2lab.courses"; // not "pt2lab-...": a new build keeps it

self.addEventListener("install", function (e) {
  e.waitUntil(caches.open(CACHE).then(function (c) { return c.addAll(FILES); })
    .then(function () { return self.skipWaiting(); }));
});

// The course folder's URL of a page (its ?course= or #course=, as web/loader.js
// reads it), or "" for none.
function courseOf(pageUrl) {
  var u = new URL(pageUrl), c = u.searchParams.get("course");
  if (c === null) c = new URLSearchParams(u.hash.replace(/^#/, "")).get("course");
  if (!c) return "";
  try {
    var base = new URL(c.replace(/\/*$/, "/"), u.href);
    return base.origin === self.location.origin && !base.search && !base.hash ? base.href : "";
  } catch (err) {
    return "";
  }
}

// Fetches and keeps what the course's index.json lists that is not kept yet:
// the lesson files, and each graph the folder holds (one it does not hold comes
// from the page's own assets/graphs/, kept with the build); then the font pages
// the lessons' characters need.
function keepCourse(base, indexText) {
  var idx;
  try {
    idx = JSON.parse(indexText);
  } catch (err) {
    return Promise.resolve();
  }
  if (!idx || idx.format !== "pt2lab-course" || !Array.isArray(idx.lessons)) return Promise.resolve();
  var seen = {};
  idx.lessons.forEach(function (l) {
    Object.keys(l.files || {}).forEach(function (k) { seen[new URL(l.files[k], base).href] = true; });
    Object.keys(l.graphs || {}).forEach(function (k) { seen[new URL(l.graphs[k], base).href] = true; });
  });
  var urls = Object.keys(seen).filter(function (u) { return u.indexOf(base) === 0; });
  return caches.open(COURSE_CACHE).then(function (c) {
    return Promise.all(urls.map(function (u) {
      return c.match(u).then(function (hit) {
        if (hit) return hit;
        return fetch(u).then(function (res) {
          return res.ok ? c.put(u, res.clone()).then(function () { return res; }) : null;
        }, function () { return null; });
      });
    }));
  }).then(function (kept) {
    return Promise.all(kept.filter(function (res, i) { return res && /\.md$/.test(urls[i]); })
      .map(function (res) { return res.text(); })).then(keepFontPages);
  });
}

// The font pages (256 code points each; a page is one file per font it draws
// from, fonts/more/PP.otf, PP-1.otf ..., all named in fonts/more/index.txt)
// holding the characters of `texts` that the page's font subset (fonts/chars.txt)
// lacks: the page fetches them when it first shows such a character, which on a
// first visit happens before this worker controls it. Kept with the build's files.
function keepFontPages(texts) {
  var scope = self.registration.scope;
  return caches.open(CACHE).then(function (c) {
    return Promise.all([c.match(scope + "fonts/chars.txt"), c.match(scope + "fonts/more/index.txt")])
      .then(function (r) { return r[0] && r[1] ? Promise.all([r[0].text(), r[1].text()]) : null; })
      .then(function (t) {
        if (!t) return null;
        var have = {}, files = {}, want = {};
        Array.from(t[0]).forEach(function (ch) { have[ch] = true; });
        t[1].split(/\s+/).forEach(function (f) {
          var p = f.split("-")[0];
          if (f) (files[p] = files[p] || []).push(f);
        });
        texts.forEach(function (text) {
          Array.from(text).forEach(function (ch) {
            var cp = ch.codePointAt(0), p = (cp >> 8).toString(16);
            if (p.length < 2) p = "0" + p;
            if (cp >= 0x20 && !have[ch] && files[p]) files[p].forEach(function (f) { want[f] = true; });
          });
        });
        return Promise.all(Object.keys(want).map(function (f) {
          var u = scope + "fonts/more/" + f + ".otf";
          return c.match(u).then(function (hit) {
            if (hit) return null;
            return fetch(u).then(function (res) { return res.ok ? c.put(u, res) : null; }, function () { return null; });
          });
        }));
      });
  });
}

// A course file: from the network (kept when it answers 200), from the cache
// when the network is gone; the index.json also keeps the rest of the course.
function courseFile(e, base) {
  var req = e.request;
  return caches.open(COURSE_CACHE).then(function (c) {
    return fetch(req).then(function (res) {
      if (res.ok) {
        var kept = c.put(req, res.clone());
        if (req.url === base + "index.json")
          kept = kept.then(function () { return res.clone().text(); })
            .then(function (text) { return keepCourse(base, text); });
        e.waitUntil(kept.catch(function () {}));
      }
      return res;
    }, function (err) {
      return c.match(req).then(function (hit) { if (hit) return hit; throw err; });
    });
  });
}

self.addEventListener("activate", function (e) {
  e.waitUntil(caches.keys().then(function (keys) {
    return Promise.all(keys.filter(function (k) { return k.indexOf("pt2lab-") === 0 && k !== CACHE; })
      .map(function (k) { return caches.delete(k); }));
  }).then(function () { return self.clients.claim(); }).then(function () {
    // A first visit fetched its course before this worker controlled the page.
    return self.clients.matchAll({ type: "window", includeUncontrolled: true });
  }).then(function (pages) {
    var bases = {};
    pages.forEach(function (p) { var b = courseOf(p.url); if (b) bases[b] = true; });
    return Promise.all(Object.keys(bases).map(function (b) {
      return fetch(b + "index.json").then(function (res) {
        if (!res.ok) return null;
        return res.clone().text().then(function (text) {
          return caches.open(COURSE_CACHE).then(function (c) { return c.put(b + "index.json", res); })
            .then(function () { return keepCourse(b, text); });
        });
      }).catch(function () {});
    }));
  }));
});

self.addEventListener("fetch", function (e) {
  var req = e.request;
  if (req.method !== "GET" || new URL(req.url).origin !== self.location.origin) return;
  // The page itself under any query (?file=..., ?step=...) is index.html.
  var nav = req.mode === "navigate";
  e.respondWith(caches.open(CACHE).then(function (c) {
    return c.match(nav ? "./" : req, { ignoreSearch: nav }).then(function (hit) {
      if (hit) return hit;
      return (nav || !e.clientId ? Promise.resolve(null) : self.clients.get(e.clientId)).then(function (page) {
        var base = page ? courseOf(page.url) : "";
        if (base && req.url.indexOf(base) === 0) return courseFile(e, base);
        // A font page's file (fonts/more/PP.otf, PP-1.otf ...) is not kept at install:
        // it is kept once a character needed it, so it is there offline the next time.
        var font = /\/fonts\/more\/[0-9a-f]{2,4}(-[0-9]+)?\.otf$/.test(new URL(req.url).pathname);
        return fetch(req).then(function (res) {
          if (font && res.ok) c.put(req, res.clone());
          return res;
        });
      });
    });
  }));
});
