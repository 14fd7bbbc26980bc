// The JSON floor of scripts/bench: a strict RFC 8259 validating scan in plain C (structure,
// string escapes, UTF-8, number grammar, nesting up to 128), building nothing. It is the
// least any parser of untrusted payloads must do, so the tape parser is compared with it.
//   bench-floor jsonscan FILE ROUNDS REPS   prints the median ns per scan of FILE
#include <stddef.h>
#include <stdint.h>

#include "jsonscan.h"

typedef struct {
    const uint8_t *p, *end;
} scan;

static void ws(scan *s) {
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\r' || *s->p == '\t')) s->p++;
}

static int hex(uint8_t c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

static int string(scan *s) {
    s->p++;  // "
    while (s->p < s->end) {
        uint8_t c = *s->p;
        if (c == '"') {
            s->p++;
            return 1;
        }
        if (c < 0x20) return 0;
        if (c == '\\') {
            if (s->end - s->p < 2) return 0;
            uint8_t e = s->p[1];
            if (e == 'u') {
                if (s->end - s->p < 6 || !hex(s->p[2]) || !hex(s->p[3]) || !hex(s->p[4]) || !hex(s->p[5])) return 0;
                s->p += 6;  // (surrogate pairing is not checked: a floor, not a parser)
            } else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't') {
                s->p += 2;
            } else {
                return 0;
            }
        } else if (c < 0x80) {
            s->p++;
        } else {
            int n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
            if (n == 0 || c > 0xF4 || s->end - s->p < n) return 0;
            for (int i = 1; i < n; i++)
                if ((s->p[i] & 0xC0) != 0x80) return 0;
            if ((c == 0xE0 && s->p[1] < 0xA0) || (c == 0xED && s->p[1] >= 0xA0) || (c == 0xF0 && s->p[1] < 0x90) ||
                (c == 0xF4 && s->p[1] >= 0x90))
                return 0;
            s->p += n;
        }
    }
    return 0;
}

static int digits(scan *s) {
    const uint8_t *start = s->p;
    while (s->p < s->end && *s->p >= '0' && *s->p <= '9') s->p++;
    return s->p > start;
}

static int number(scan *s) {
    if (*s->p == '-') s->p++;
    if (s->p < s->end && *s->p == '0') {
        s->p++;
    } else if (!digits(s)) {
        return 0;
    }
    if (s->p < s->end && *s->p == '.') {
        s->p++;
        if (!digits(s)) return 0;
    }
    if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
        s->p++;
        if (s->p < s->end && (*s->p == '+' || *s->p == '-')) s->p++;
        if (!digits(s)) return 0;
    }
    return 1;
}

static int literal(scan *s, const char *word, size_t length) {
    if ((size_t)(s->end - s->p) < length) return 0;
    for (size_t i = 0; i < length; i++)
        if (s->p[i] != (uint8_t)word[i]) return 0;
    s->p += length;
    return 1;
}

int jsonscan_validate(const uint8_t *bytes, size_t length) {
    scan s = {bytes, bytes + length};
    char stack[128];  // '{' or '[' per open container
    int depth = 0;
    ws(&s);
    for (;;) {
        // A value.
        if (s.p >= s.end) return 0;
        uint8_t c = *s.p;
        if (c == '{' || c == '[') {
            if (depth == 128) return 0;
            stack[depth++] = (char)c;
            s.p++;
            ws(&s);
            if (s.p < s.end && *s.p == (c == '{' ? '}' : ']')) {
                s.p++;
                depth--;
            } else {
                if (c == '{') {
                    if (s.p >= s.end || *s.p != '"' || !string(&s)) return 0;
                    ws(&s);
                    if (s.p >= s.end || *s.p != ':') return 0;
                    s.p++;
                    ws(&s);
                }
                continue;
            }
        } else if (c == '"') {
            if (!string(&s)) return 0;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            if (!number(&s)) return 0;
        } else if (!(literal(&s, "true", 4) || literal(&s, "false", 5) || literal(&s, "null", 4))) {
            return 0;
        }
        // After a value: a separator, a close, or the end.
        for (;;) {
            ws(&s);
            if (depth == 0) return s.p == s.end;
            if (s.p >= s.end) return 0;
            char open = stack[depth - 1];
            if (*s.p == ',') {
                s.p++;
                ws(&s);
                if (open == '{') {
                    if (s.p >= s.end || *s.p != '"' || !string(&s)) return 0;
                    ws(&s);
                    if (s.p >= s.end || *s.p != ':') return 0;
                    s.p++;
                    ws(&s);
                }
                break;
            }
            if (*s.p != (open == '{' ? '}' : ']')) return 0;
            s.p++;
            depth--;
        }
    }
}
