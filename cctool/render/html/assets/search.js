// search.js: find nodes by name (a case-insensitive regular expression), mark every match
// in both views, open the tree down to them, and step through them in drawing order.
(() => {
  const REVEAL = 500; // opening more matches than this would unfold most of a large tree

  CCT.Search = class Search {
    // `show(i)`: bring node i into view (prune reset, ancestors opened, centred).
    constructor(model, state, view, show) {
      Object.assign(this, { model, state, view, show, matches: [], pos: -1, listeners: [] });
      const $ = (id) => document.getElementById(id);
      this.input = $("search");
      this.count = $("search-count");
      this.bind($);
    }

    on(fn) { this.listeners.push(fn); }

    bind($) {
      this.input.addEventListener("input", () => this.set(this.input.value));
      this.input.addEventListener("keydown", (e) => {
        if (e.key === "Enter") { e.preventDefault(); this.step(e.shiftKey ? -1 : 1); }
        if (e.key === "Escape") { this.input.value = ""; this.set(""); }
      });
      $("search-next").addEventListener("click", () => this.step(1));
      $("search-prev").addEventListener("click", () => this.step(-1));
      document.addEventListener("keydown", (e) => {
        if (e.key === "F3" || ((e.ctrlKey || e.metaKey) && e.key === "g")) {
          e.preventDefault();
          this.step(e.shiftKey ? -1 : 1);
        } else if (e.key === "/" && !/^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement.tagName)) {
          e.preventDefault();
          this.input.focus();
          this.input.select();
        }
      });
    }

    // A new pattern: find, mark and open every match, then go to the first one.
    set(text) {
      this.matches = [];
      this.pos = -1;
      this.input.classList.remove("invalid");
      if (text) {
        let re;
        try {
          re = new RegExp(text, "i");
        } catch (err) {
          this.input.classList.add("invalid");
          this.report(`invalid regex: ${err.message.replace(/^Invalid regular expression: /, "")}`);
          return;
        }
        this.matches = this.model.matching(re);
        this.matches.slice(0, REVEAL).forEach((i) => this.state.reveal(i));
      }
      if (this.matches.length) { this.go(0); return; }
      this.mark();
      this.view.refresh();
      this.report(text ? "no match" : "");
    }

    step(delta) {
      const n = this.matches.length;
      if (!n) return;
      this.go(((this.pos < 0 ? (delta > 0 ? -1 : 0) : this.pos) + delta + n) % n);
    }

    go(k) {
      this.pos = k;
      this.mark();
      this.show(this.matches[k]);
      const more = this.matches.length > REVEAL ? ` (first ${REVEAL} opened)` : "";
      this.report(`${k + 1} of ${this.matches.length}${more}`);
    }

    current() { return this.pos >= 0 ? this.matches[this.pos] : -1; }

    mark() {
      this.view.setMatches(this.matches, this.current());
      this.listeners.forEach((fn) => fn(this));
    }

    report(text) { this.count.textContent = text; }
  };
})();
