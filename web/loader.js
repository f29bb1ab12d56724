// pt2lab's loader: checks WebGL2, fetches the WebAssembly app, its fonts, the
// lesson texts and the first graph with a progress bar, then starts the app. Every URL is
// relative, so the folder works under any path. A missing WebGL2 or a failed
// download shows a readable error screen instead of a blank canvas.
(function () {
  "use strict";
  var pt2lab = window.pt2lab;
  var DEFAULT_FILE = "conv_bn_relu_eval.pt2";

  function startFileFromHash() {
    var f = pt2lab.option("file"); // ?file=... (embedding) or #file=... (the page's own)
    return /^[A-Za-z0-9_.-]+\.(?:pt2|json)$/.test(f) ? f : DEFAULT_FILE;
  }

  // ?course=: the course folder's URL (ending in "/"), "" for none, null for a
  // value that is not a folder of this site (another origin, a bad URL).
  function courseBase() {
    var c = pt2lab.option("course");
    if (!c) return "";
    var u;
    try {
      u = new URL(c.replace(/\/*$/, "/"), location.href);
    } catch (e) {
      return null;
    }
    if (u.origin !== location.origin || u.search || u.hash) return null;
    return u.href;
  }

  function hasWebGL2() {
    try {
      return !!document.createElement("canvas").getContext("webgl2");
    } catch (e) {
      return false;
    }
  }

  var fill = document.getElementById("bar-fill");
  var label = document.getElementById("loader-text");

  // Fetches every URL with one progress bar over all their bytes.
  function fetchAll(items) {
    var loaded = {}, total = {};
    function update() {
      var l = 0, t = 0;
      items.forEach(function (it) {
        l += loaded[it.url] || 0;
        t += Math.max(total[it.url] || it.guess, loaded[it.url] || 0);
      });
      fill.style.width = Math.min(100, (100 * l) / Math.max(t, 1)).toFixed(1) + "%";
      label.textContent = "Loading " + (l / 1048576).toFixed(2) + " MB of " + (t / 1048576).toFixed(2) + " MB";
    }
    return Promise.all(items.map(function (it) {
      return fetch(it.url).then(function (res) {
        if (!res.ok) throw new Error(it.url + ": the server answered " + res.status + " " + res.statusText);
        // A compressed answer's Content-Length counts the bytes on the wire; the
        // body read below is the decoded bytes, so only a plain one gives the total.
        var n = Number(res.headers.get("Content-Length")) || 0;
        if (n && !res.headers.get("Content-Encoding")) total[it.url] = n;
        if (!res.body || !res.body.getReader) return res.arrayBuffer().then(function (b) { return new Uint8Array(b); });
        var reader = res.body.getReader(), chunks = [], got = 0;
        function pump() {
          return reader.read().then(function (r) {
            if (r.done) {
              var out = new Uint8Array(got), at = 0;
              chunks.forEach(function (c) { out.set(c, at); at += c.length; });
              return out;
            }
            chunks.push(r.value);
            got += r.value.length;
            loaded[it.url] = got;
            update();
            return pump();
          });
        }
        return pump();
      }, function (e) {
        throw new Error(it.url + ": " + (e && e.message ? e.message : "the download failed"));
      }).then(function (bytes) {
        loaded[it.url] = bytes.length;
        total[it.url] = bytes.length;
        update();
        return bytes;
      });
    }));
  }

  if (!hasWebGL2()) {
    pt2lab.fatal("This page draws with WebGL2, which this browser does not offer (or has switched off).",
      "Use a current Chrome, Edge, Firefox or Safari, and check that hardware acceleration / WebGL is enabled.");
    return;
  }
  pt2lab.startFile = startFileFromHash();
  var files = [
    { url: "app.wasm", guess: 1500000 },
    { url: "fonts/ui.otf", guess: 200000, name: "fonts/ui.otf" },
    { url: "fonts/mono.ttf", guess: 20000, name: "fonts/mono.ttf" },
    { url: "fonts/chars.txt", guess: 2000, name: "fonts/chars.txt" },
    { url: "fonts/more/index.txt", guess: 6000, name: "fonts/more/index.txt" },
    { url: "assets/graphs/index.json", guess: 300, name: "assets/graphs/index.json" },
    { url: "assets/graphs/" + pt2lab.startFile, guess: 50000, name: pt2lab.startFile }
  ];
  // The lesson texts (assets/lessons/index.json names them) come with the first
  // download too: the lesson list and a deep link (#m00-4/3) need them at once.
  // ?course=folder/ (docs/LESSONS.md, "Hosting a course"): a teacher's course in a
  // folder of the same site, listed by the index.json `pt2lab lesson check` wrote
  // there; its lessons replace the shipped ones, its graphs are fetched from it.
  var course = courseBase();
  if (course === null) {
    pt2lab.fatal("?course=" + pt2lab.option("course") + " is not a folder of this site.",
      "Give the course folder's path relative to this page, for example ?course=my_course/.");
    return;
  }
  var enc = new TextEncoder();
  function indexOf(url) {
    return fetch(url).then(function (res) {
      if (!res.ok) throw new Error(url + ": the server answered " + res.status +
        (course ? " (run pt2lab lesson check on the course folder: it writes index.json)" : ""));
      return res.text();
    });
  }
  var lessons = course ? indexOf(course + "index.json").then(function (text) {
    var idx = JSON.parse(text), safe = /^[A-Za-z0-9_.-]+\.md$/;
    if (!idx || idx.format !== "pt2lab-course" || !Array.isArray(idx.lessons))
      throw new Error(course + "index.json is not a course index (format pt2lab-course)");
    pt2lab.preloaded["course/index.json"] = enc.encode(text);
    pt2lab.preloaded["course/base"] = enc.encode(course);
    idx.lessons.forEach(function (l) {
      Object.keys(l.files || {}).forEach(function (lang) {
        var n = l.files[lang];
        if (!safe.test(n)) throw new Error(course + "index.json: a lesson file named " + JSON.stringify(n));
        files.push({ url: course + n, guess: 12000, name: "course/" + n });
      });
    });
  }) : indexOf("assets/lessons/index.json").then(function (text) {
    var names = JSON.parse(text);
    pt2lab.preloaded["assets/lessons/index.json"] = enc.encode(text);
    names.forEach(function (n) {
      files.push({ url: "assets/lessons/" + n, guess: 12000, name: "assets/lessons/" + n });
    });
  });
  // app.js loads while the files download; the runtime starts (main()) only
  // once all of them are here, through emscripten's instantiateWasm hook.
  var all = lessons.then(function () { return fetchAll(files); }).then(function (list) {
    files.forEach(function (f, i) { if (f.name) pt2lab.preloaded[f.name] = list[i]; });
    label.textContent = "Starting...";
    return list[0];
  });
  all.catch(function (e) {
    pt2lab.fatal("A file of the page could not be downloaded: " + e.message,
      "Check the connection (or that the folder is complete) and reload the page.");
  });
  window.Module = {
    canvas: document.getElementById("canvas"),
    instantiateWasm: function (imports, receive) {
      all.then(function (wasm) { return WebAssembly.instantiate(wasm, imports); })
        .then(function (r) { receive(r.instance, r.module); },
              function (e) { if (!pt2lab.failed) pt2lab.fatal("The app could not start: " + e, "Reload the page."); });
      return {};
    },
    print: function (t) { console.log(t); },
    printErr: function (t) { console.warn(t); },
    onAbort: function (what) {
      pt2lab.fatal("The app stopped: " + what, "Reload the page; if it happens again, the browser console has the details.");
    }
  };
  var script = document.createElement("script");
  script.src = "app.js";
  script.onerror = function () {
    pt2lab.fatal("app.js could not be downloaded.", "Check the connection (or that the folder is complete) and reload the page.");
  };
  document.body.appendChild(script);
})();
