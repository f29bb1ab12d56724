// pt2lab's browser bridges, called from the WebAssembly app (src/app/platform/web_*.cpp):
// files (picker, drag and drop, fetching the site's graphs, downloads), clipboard, URL
// hash and hashchange, localStorage, the first-frame signal and the error screen; and the
// read-only test hook window.pt2lab.state().
(function () {
  "use strict";
  var pt2lab = {
    preloaded: {},      // name -> Uint8Array, fetched by the loader before main()
    startFile: "",
    firstFrameMs: null, // performance.now() at the first interactive frame
    lastCopy: null,     // {chars, ok}: the last clipboard write
    lastDownload: null  // {name, bytes}: the last download the app made
  };
  window.pt2lab = pt2lab;

  function app() { return window.Module; }

  // Hands a filled buffer (from _pt2lab_file_buffer, or 0) or an error to the app; it
  // opens the file on its next frame.
  // A C string of s in the app's heap, for one call (the caller frees it).
  function cstr(M, s) {
    var len = M.lengthBytesUTF8(s) + 1, p = M._malloc(len);
    M.stringToUTF8(s, p, len);
    return p;
  }
  function arrive(name, data, n, error) {
    var M = app(), namePtr = cstr(M, name), errPtr = cstr(M, error || "");
    M._pt2lab_file_arrived(namePtr, data, n, errPtr);
    M._free(namePtr);
    M._free(errPtr);
  }
  function lateDone(M, data, error) {
    var p = cstr(M, error);
    M._pt2lab_file_late_done(data, p);
    M._free(p);
  }

  // Hands bytes (or an error) to the app.
  function deliver(name, bytes, error) {
    var M = app();
    if (!M || !M._pt2lab_file_arrived) return;
    var n = bytes ? bytes.length : 0;
    // A buffer the app takes over without a copy (a copy would hold a big file twice).
    var data = n ? M._pt2lab_file_buffer(n) : 0;
    if (n) M.HEAPU8.set(bytes, data);
    arrive(name, data, n, error);
  }

  // A picked or dropped file streams into the app's buffer as the browser reads it
  // (File.stream(): pieces of up to a few MB, each copied in its own task): no task
  // copies the whole file, the file is never held twice, and the app shows how far
  // the reading is (pt2lab.reads) and can cancel it.
  // A big .pt2 goes in two parts: its tail (the zip's directory) first, from which the
  // app says which ranges (its big weight records) it can open without; the rest of
  // the file then arrives and opens, and those ranges stream in after it, into the
  // same buffer, while the graph is already on screen (pt2lab.reads marks them late).
  pt2lab.reads = [];
  var LATE_FILE = 4 << 20, TAIL = 1 << 20;
  function readFile(file) {
    var M = app();
    if (!M || !M._pt2lab_file_arrived) return;
    // A big .pt2's tail is asked for first: the browser reads it while the app makes the
    // buffer (its zeroing is tens of ms of this thread for a 47 MB file).
    var n = file.size, tail = n - Math.min(n, TAIL);
    var early = n >= LATE_FILE && M._pt2lab_file_late_plan ? file.slice(tail).arrayBuffer() : null;
    var data = n ? M._pt2lab_file_buffer(n) : 0;
    var r = { name: file.name, done: 0, total: n, cancelled: false, late: false, buffer: 0 };
    pt2lab.reads.push(r);
    function end() { var k = pt2lab.reads.indexOf(r); if (k >= 0) pt2lab.reads.splice(k, 1); }
    function fail(message) {
      end();
      if (r.late) return lateDone(M, data, message || "cancelled");
      if (data) M._pt2lab_file_release(data);
      if (message) arrive(file.name, 0, 0, message);
    }
    function failed(e) { fail("the browser could not read the file" + (e && e.message ? " (" + e.message + ")" : "")); }
    // Streams [from, to) of the file into the buffer at the same offsets, then calls done.
    function stream(from, to, done) {
      var reader = file.slice(from, to).stream().getReader(), at = from;
      function next(chunk) {
        if (r.cancelled) { reader.cancel(); return fail(""); }
        if (chunk.done) {
          if (at !== to) return fail("the browser read " + (at - from) + " of " + (to - from) + " bytes");
          return done();
        }
        var v = chunk.value;
        if (at + v.length > to) { reader.cancel(); return fail("the file grew while it was read"); }
        M.HEAPU8.set(v, data + at); // HEAPU8 anew each time: the heap may have grown
        at += v.length;
        r.done += v.length;
        reader.read().then(next, failed);
      }
      reader.read().then(next, failed);
    }
    function whole() { stream(0, n, function () { end(); arrive(file.name, data, n, ""); }); }
    if (!early) return whole();
    early.then(function (b) {
      if (r.cancelled) return fail("");
      M.HEAPU8.set(new Uint8Array(b), data + tail);
      var p = M._pt2lab_file_late_plan(data, n, tail), late = null;
      if (p) { late = JSON.parse(M.UTF8ToString(p)); M._free(p); }
      if (!late || !late.length) { r.done = 0; return whole(); } // not a .pt2 worth it: whole
      r.done = n - tail;
      // Everything but the late ranges (small pieces: headers, the graph's JSON), all at once.
      var parts = [], at = 0;
      late.forEach(function (g) { if (g[0] > at) parts.push([at, g[0]]); at = g[1]; });
      if (at < tail) parts.push([at, tail]);
      Promise.all(parts.map(function (q) {
        return file.slice(q[0], q[1]).arrayBuffer().then(function (b) {
          if (r.cancelled) return;
          M.HEAPU8.set(new Uint8Array(b), data + q[0]);
          r.done += b.byteLength;
        });
      })).then(function () {
        if (r.cancelled) return fail("");
        // The file opens now; its late bytes go on arriving (r is now the late read).
        var lateBytes = 0;
        late.forEach(function (g) { lateBytes += g[1] - g[0]; });
        r.late = true; r.buffer = data; r.done = 0; r.total = lateBytes;
        var namePtr = cstr(M, file.name), latePtr = cstr(M, JSON.stringify(late));
        M._pt2lab_file_arrived_early(namePtr, data, n, latePtr);
        M._free(namePtr);
        M._free(latePtr);
        // One stream over all of them (a stream per range costs a round trip each; the
        // few bytes between ranges are written again with the values they already hold).
        var from = late[0][0], to = late[late.length - 1][1];
        r.total = to - from;
        stream(from, to, function () { end(); lateDone(M, data, ""); });
      }, failed);
    }, failed);
  }
  // What window.pt2lab.reads holds, for the app (web_files.cpp), and its Cancel.
  pt2lab.readsJson = function () {
    return JSON.stringify(pt2lab.reads.map(function (r) {
      return { name: r.name, done: r.done, total: r.total, late: r.late, buffer: r.buffer };
    }));
  };
  pt2lab.cancelReads = function () { pt2lab.reads.forEach(function (r) { if (!r.late) r.cancelled = true; }); };
  pt2lab.cancelLateRead = function (buffer) {
    pt2lab.reads.forEach(function (r) { if (r.late && r.buffer === buffer) r.cancelled = true; });
  };

  // Several files at once (a teacher's lesson file with its graphs): read whole, then
  // handed over in one go, so the app takes them in the same frame and gives the
  // lesson the graphs dropped beside it (app_lesson.cpp, take_dropped_lessons).
  function readFiles(list) {
    var files = Array.prototype.slice.call(list);
    if (files.length === 1) return readFile(files[0]);
    Promise.all(files.map(function (f) {
      return f.arrayBuffer().then(function (b) { return { name: f.name, bytes: new Uint8Array(b) }; },
                                  function (e) { return { name: f.name, error: "the browser could not read the file" + (e && e.message ? " (" + e.message + ")" : "") }; });
    })).then(function (read) {
      read.forEach(function (r) { deliver(r.name, r.bytes || null, r.error || ""); });
    });
  }

  pt2lab.openPicker = function () { document.getElementById("file-input").click(); };
  document.getElementById("file-input").addEventListener("change", function (e) {
    if (e.target.files && e.target.files.length) readFiles(e.target.files);
    e.target.value = "";
  });

  pt2lab.fetchFile = function (url, name) {
    fetch(url).then(function (res) {
      if (!res.ok) throw new Error("the server answered " + res.status + " " + res.statusText);
      return res.arrayBuffer();
    }).then(function (b) { deliver(name, new Uint8Array(b), ""); },
            function (e) { deliver(name, null, "could not download " + url + ": " + e.message); });
  };

  // Drag and drop anywhere on the page.
  var hint = document.getElementById("drop-hint"), depth = 0;
  function hasFiles(e) { return e.dataTransfer && Array.prototype.indexOf.call(e.dataTransfer.types, "Files") >= 0; }
  window.addEventListener("dragenter", function (e) { if (hasFiles(e)) { depth++; hint.hidden = false; e.preventDefault(); } });
  window.addEventListener("dragover", function (e) { if (hasFiles(e)) e.preventDefault(); });
  window.addEventListener("dragleave", function () { if (--depth <= 0) { depth = 0; hint.hidden = true; } });
  window.addEventListener("drop", function (e) {
    depth = 0;
    hint.hidden = true;
    if (!e.dataTransfer || !e.dataTransfer.files || !e.dataTransfer.files.length) return;
    e.preventDefault();
    readFiles(e.dataTransfer.files);
  });

  var canvas = document.getElementById("canvas");
  canvas.addEventListener("contextmenu", function (e) { e.preventDefault(); });

  // Touch: one finger is the mouse. GLFW (emscripten 3.1.6) takes touchstart as a
  // press but reads a touch's position only for SDL, so a tap pressed wherever the
  // pointer last was (the last tap) before the browser's own mouse events for it
  // arrived. Here, ahead of GLFW (window, capture phase), the first finger becomes
  // mouse events at its position; the app scrolls the panel under a dragged finger
  // (ui/widgets.cpp, touch_scroll). A second finger is ignored.
  var finger = null, last = null; // the finger that is the mouse, and where it last was
  function mouseAt(type, t) {
    last = { clientX: t.clientX, clientY: t.clientY, screenX: t.screenX, screenY: t.screenY };
    canvas.dispatchEvent(new MouseEvent(type, {
      bubbles: true, cancelable: true, view: window, button: 0, buttons: type === "mouseup" ? 0 : 1,
      clientX: t.clientX, clientY: t.clientY, screenX: t.screenX, screenY: t.screenY,
    }));
  }
  function find(list, id) {
    for (var i = 0; i < list.length; i++) if (list[i].identifier === id) return list[i];
    return null;
  }
  function claim(e) {
    if (e.target !== canvas) return false;
    e.stopPropagation();
    if (e.cancelable) e.preventDefault(); // no mouse events of the browser's after a tap
    return true;
  }
  // The finger is gone without its end (the browser lost it): the mouse is released.
  function lost(e) {
    if (finger !== null && !find(e.touches, finger)) {
      finger = null;
      if (last) mouseAt("mouseup", last);
    }
  }
  var touchOptions = { capture: true, passive: false };
  window.addEventListener("touchstart", function (e) {
    if (!claim(e)) return;
    lost(e);
    if (finger !== null) return; // a second finger
    var t = e.changedTouches[0];
    finger = t.identifier;
    mouseAt("mousemove", t);
    mouseAt("mousedown", t);
  }, touchOptions);
  window.addEventListener("touchmove", function (e) {
    if (!claim(e) || finger === null) return;
    var t = find(e.changedTouches, finger);
    if (t) mouseAt("mousemove", t);
  }, touchOptions);
  ["touchend", "touchcancel"].forEach(function (type) {
    window.addEventListener(type, function (e) {
      if (!claim(e) || finger === null) return;
      var t = find(e.changedTouches, finger);
      if (t) {
        finger = null;
        mouseAt("mouseup", t);
      } else {
        lost(e);
      }
    }, touchOptions);
  });

  // Keys belong to what has focus. GLFW listens on the window (capture phase) and
  // takes every key, Tab included; this listener runs first and keeps keys aimed
  // at the page's own HTML (the text view, its buttons) away from the canvas.
  ["keydown", "keypress", "keyup"].forEach(function (type) {
    window.addEventListener(type, function (e) {
      var a = document.activeElement;
      if (a && a !== canvas && a !== document.body) e.stopImmediatePropagation();
    }, true);
  });
  // A character past U+FFFF typed as a key (an emoji, 𠀀): Chromium's keypress
  // gives only its first UTF-16 half as charCode, which is what GLFW hands the
  // app. Its key is the whole character: that goes to the app instead
  // (src/app/platform/web_input.cpp), and GLFW never sees the event.
  window.addEventListener("keypress", function (e) {
    var k = e.key, cp = k ? k.codePointAt(0) : 0, M = app();
    if (cp <= 0xFFFF || k.length !== 2 || e.charCode === cp || e.ctrlKey || e.metaKey) return;
    if (!M || !M._pt2lab_text_input) return;
    e.stopImmediatePropagation();
    M._pt2lab_text_input(cp);
  }, true);
  // Focus between the canvas and the HTML around it. The app moves Tab through
  // its lesson panel and, past the last control (or before the first), hands
  // focus to the HTML (focusOut); Tab into the canvas tells the app from which
  // side it came (+1 from before it: the first control, -1 from after: the last).
  var focusEntry = 0, pointerDown = false;
  canvas.addEventListener("pointerdown", function () { pointerDown = true; }, true);
  window.addEventListener("pointerup", function () { pointerDown = false; }, true);
  function focusables(root) {
    return Array.prototype.filter.call(
      root.querySelectorAll("button, a[href], input, select, textarea, [tabindex]"),
      function (el) { return !el.disabled && el.tabIndex >= 0 && el.getClientRects().length > 0; });
  }
  canvas.addEventListener("focus", function (e) {
    // Only from another element (Tab, Shift+Tab); the page's own focus() at start leaves the app alone.
    // A click on the canvas is the app's own business (the press picks the control).
    var from = e.relatedTarget;
    if (from && !pointerDown) focusEntry = from.compareDocumentPosition(canvas) & Node.DOCUMENT_POSITION_PRECEDING ? -1 : 1;
  });
  // Whether keys go to the canvas: where the document's focus is, not the last
  // focus / blur event. A page whose window is not focused (a background tab, one
  // of several headless pages) gets its focus() at start without a focus event
  // until the window is focused; keys sent to it still reach the canvas.
  pt2lab.canvasFocused = function () { return document.activeElement === canvas; };
  pt2lab.takeFocusEntry = function () { var d = focusEntry; focusEntry = 0; return d; };
  pt2lab.focusOut = function (dir) {
    var all = focusables(document.body), i = all.indexOf(canvas);
    var next = dir > 0 ? all[i + 1] || all[0] : all[i - 1] || all[all.length - 1];
    if (next && next !== canvas) next.focus();
  };

  pt2lab.copy = function (text) {
    function fallback() {
      var ta = document.createElement("textarea");
      ta.value = text;
      ta.style.position = "fixed";
      ta.style.opacity = "0";
      document.body.appendChild(ta);
      ta.select();
      var ok = false;
      try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
      document.body.removeChild(ta);
      pt2lab.lastCopy = { chars: text.length, ok: ok };
      document.getElementById("canvas").focus();
    }
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(function () {
        pt2lab.lastCopy = { chars: text.length, ok: true };
      }, fallback);
    } else {
      fallback();
    }
  };

  // A download of bytes the app made (a saved .pt2): a Blob behind an <a download> link.
  pt2lab.download = function (name, bytes) {
    var url = URL.createObjectURL(new Blob([bytes], { type: "application/octet-stream" }));
    var a = document.createElement("a");
    a.href = url;
    a.download = name;
    a.style.display = "none";
    document.body.appendChild(a);
    a.click();
    document.body.removeChild(a);
    setTimeout(function () { URL.revokeObjectURL(url); }, 60000);
    pt2lab.lastDownload = { name: name, bytes: bytes.length };
  };

  // Page options (docs/EMBEDDING.md): ?file=...&step=...&hide=...; the query
  // wins over the hash (#file=... is what the page writes itself).
  pt2lab.option = function (name) {
    var q = new URLSearchParams(location.search), h = new URLSearchParams(location.hash.replace(/^#/, ""));
    var v = q.get(name);
    if (v === null) v = h.get(name);
    return v === null ? "" : v;
  };

  // Opens bytes as if the file had been dropped (the benchmark and embedding pages use it).
  pt2lab.openBytes = function (name, bytes) { deliver(name, bytes, ""); };

  // Benchmark mode (?bench=1): frame and open timings, plus the WebAssembly heap.
  pt2lab.bench = function () {
    var M = app();
    if (!M || pt2lab.firstFrameMs === null || !M._pt2lab_bench_json) return null; // not up yet
    var b = JSON.parse(M.UTF8ToString(M._pt2lab_bench_json()));
    b.heap_bytes = M.HEAPU8 ? M.HEAPU8.length : 0;
    return b;
  };

  // The app's hash: a lesson step the learner moved to is a new history entry
  // (newEntry), so Back and Forward walk the steps; anything else (following a
  // link, correcting one) replaces the current entry.
  pt2lab.setHash = function (hash, newEntry) {
    var url = location.pathname + location.search + (hash ? "#" + hash : "");
    if (newEntry && location.hash.replace(/^#/, "") !== hash) history.pushState({ pt2lab: true }, "", url);
    else history.replaceState(history.state, "", url);
  };
  // The entry this visit began on: Back to it says that one more Back leaves pt2lab.
  history.replaceState({ pt2lab: true, start: true }, "");
  window.addEventListener("popstate", function (e) {
    var note = document.getElementById("history-note");
    note.hidden = !(e.state && e.state.start);
    if (!note.hidden) {
      clearTimeout(note.timer);
      note.timer = setTimeout(function () { note.hidden = true; }, 8000);
    }
  });
  // hashchange (a link, the address bar, back / forward): the app takes it on its next frame.
  // setHash's replaceState fires no hashchange, so the app's own changes do not come back.
  var hashChange = "";
  // The hash comes from the event, not from location: by the time a quick second Back's
  // event is handled, the app may have rewritten location for the first one.
  window.addEventListener("hashchange", function (e) {
    var url = e.newURL || location.href, at = url.indexOf("#");
    hashChange = (at < 0 ? "" : url.slice(at + 1)) || "#";
  });
  pt2lab.takeHashChange = function () { var h = hashChange; hashChange = ""; return h; };
  pt2lab.loadSetting = function (key) {
    try { return localStorage.getItem("pt2lab." + key) || ""; } catch (e) { return ""; }
  };
  pt2lab.saveSetting = function (key, value) {
    try { localStorage.setItem("pt2lab." + key, value); } catch (e) { /* storage disabled: keep defaults */ }
  };

  // The page's language and the words of its own HTML, from the app's one table
  // (src/app/page_strings.inc; platform::set_page_language at start and on every language
  // change): the document's lang and title and index.html's own elements. The text
  // view reads pt2lab.words too. Before the app starts, index.html's English stands.
  pt2lab.lang = "";
  pt2lab.words = null;
  pt2lab.setLanguage = function (lang, words) {
    pt2lab.lang = lang;
    pt2lab.words = words;
    document.documentElement.lang = lang;
    document.title = words.web_title;
    var text = { "text-view-toggle": words.web_toggle, "text-view-close": words.web_close,
                 "drop-hint": words.web_drop, "history-note": words.web_history };
    Object.keys(text).forEach(function (id) { document.getElementById(id).textContent = text[id]; });
    document.getElementById("canvas").setAttribute("aria-label", words.web_canvas);
    if (pt2lab.textView) pt2lab.textView.language();
  };

  pt2lab.firstFrame = function () {
    pt2lab.firstFrameMs = performance.now();
    document.getElementById("loader").hidden = true;
    document.getElementById("canvas").focus();
    // Offline use: the service worker caches this build's files, after the first
    // frame so it does not compete with the first download.
    if ("serviceWorker" in navigator && !pt2lab.option("nosw")) {
      navigator.serviceWorker.register("sw.js").then(function (reg) {
        pt2lab.serviceWorker = "registered";
        var sw = reg.installing || reg.waiting || reg.active;
        function ready() { if (sw.state === "activated") pt2lab.serviceWorker = "ready"; }
        if (sw) { ready(); sw.addEventListener("statechange", ready); }
      }, function (e) { pt2lab.serviceWorker = "failed: " + e.message; });
    }
  };

  pt2lab.fatal = function (message, hint) {
    document.getElementById("loader").hidden = true;
    document.getElementById("canvas").hidden = true;
    document.getElementById("failure-text").textContent = message;
    document.getElementById("failure-hint").textContent = hint || "";
    document.getElementById("failure").hidden = false;
    pt2lab.failed = message;
  };

  // The read-only test hook: the app's state as JSON (see src/app/state_json.cpp).
  pt2lab.state = function () {
    var M = app();
    if (!M || pt2lab.firstFrameMs === null) return null; // the runtime is not up yet
    return JSON.parse(M.UTF8ToString(M._pt2lab_state_json()));
  };
})();
