/* SPDX-License-Identifier: Apache-2.0 */
/* args.c - getopt_long over a command's table entry, and its help (see
 * args.h).
 *
 * Notes:
 * - The short-option string starts with "-:": '-' hands every operand back
 *   in order (code 1) so that options may follow operands whatever
 *   $POSIXLY_CORRECT says, ':' reports a missing value apart from an unknown
 *   option; getopt's own messages are off (opterr = 0) so that every error
 *   names the command.
 * - optind is reset to 0 on each call: glibc then starts afresh.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "base/suggest.h"
#include "base/syntax.h"
#include "cli.h"

#define MAX_OPTS 48

static const cli_opt_t help_opt = {'h', "help",          'h', NULL, CLI_VAL_NONE, NULL, 0,
                                   0,   "show this help"};

/* ---- help ---------------------------------------------------------------- */

/* Print `text` with every line after the first indented by `indent`. */
static void put_indented(FILE *f, const char *text, int indent)
{
    for (const char *p = text; *p != '\0'; p++) {
        fputc(*p, f);
        if (*p == '\n' && p[1] != '\0')
            fprintf(f, "%*s", indent, "");
    }
}

/* `len` bytes of `text` from column `col`, wrapped at spaces to `width`
 * columns, continued at column `col`; ends the line. */
static void put_wrapped(FILE *f, const char *text, size_t len, int col, int width)
{
    int at = col;

    while (len > 0) {
        size_t word = 0;

        while (word < len && text[word] != ' ')
            word++;
        if (at > col && at + 1 + (int)word > width) {
            fprintf(f, "\n%*s", col, "");
            at = col;
        } else if (at > col) {
            fputc(' ', f);
            at++;
        }
        fwrite(text, 1, word, f);
        at += (int)word;
        text += word;
        len -= word;
        while (len > 0 && *text == ' ') {
            text++;
            len--;
        }
    }
    fputc('\n', f);
}

static void put_option(FILE *f, const cli_opt_t *o)
{
    char left[64];
    int n;

    n = snprintf(left, sizeof(left), "  %s%c%s--%s%s%s", o->letter ? "-" : "",
                 o->letter ? o->letter : ' ', o->letter ? ", " : "  ", o->name, o->value ? " " : "",
                 o->value ? o->value : "");
    if (!o->letter) /* no short name: start at the short name's column */
        n = snprintf(left, sizeof(left), "  --%s%s%s", o->name, o->value ? " " : "",
                     o->value ? o->value : "");
    if (n > 25)
        fprintf(f, "%s\n%26s", left, "");
    else
        fprintf(f, "%-26s", left);
    put_indented(f, o->help, 26);
    fputc('\n', f);
}

void cli_help(const cli_spec_t *spec, FILE *f)
{
    size_t i;
    int any = 0;
    const char *p;

    for (i = 0; i < 3 && spec->synopsis[i] != NULL; i++) {
        /* a long synopsis goes on under its first word */
        int n = fprintf(f, "%s sluice %s ", i == 0 ? "usage:" : "   or:", spec->name);
        put_indented(f, spec->synopsis[i], n);
        fputc('\n', f);
    }
    fprintf(f, "\n%s\n", spec->description);
    if (spec->subs != NULL) {
        fprintf(f, "\ncommands:\n");
        for (i = 0; spec->subs[i] != NULL; i++) {
            const char *leaf = strrchr(spec->subs[i]->name, ' ');
            fprintf(f, "  %-8s %s\n", leaf ? leaf + 1 : spec->subs[i]->name,
                    spec->subs[i]->summary);
        }
        fprintf(f, "\nRun 'sluice %s <command> --help' for the options of each.\n", spec->name);
    }
    fprintf(f, "\noptions:\n");
    for (i = 0; spec->opts != NULL && spec->opts[i] != NULL; i++)
        if (!spec->opts[i]->service)
            put_option(f, spec->opts[i]);
    put_option(f, &help_opt);
    for (i = 0; spec->opts != NULL && spec->opts[i] != NULL; i++) {
        if (!spec->opts[i]->service)
            continue;
        if (!any++)
            fprintf(f, "\nservice options (send the command to a running `sluice serve`):\n");
        put_option(f, spec->opts[i]);
    }
    fprintf(f, "\nexit status:\n");
    for (p = spec->exit_status; *p != '\0';) {
        size_t code = strcspn(p, "\t"), len;
        const char *what = p + code + (p[code] == '\t');

        len = strcspn(what, "\n");
        fprintf(f, "  %-8.*s ", (int)code, p);
        put_wrapped(f, what, len, 11, 80);
        p = what + len + (what[len] == '\n');
    }
}

int cli_usage_error(const cli_spec_t *spec, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "sluice %s: ", spec->name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    cli_usage_hint(spec);
    return CLI_EX_USAGE;
}

void cli_usage_hint(const cli_spec_t *spec)
{
    fprintf(stderr, "Run 'sluice %s --help' for its usage and options.\n", spec->name);
}

int cli_check_input(const cli_spec_t *spec, const char *what, const char *path)
{
    if (strcmp(path, "-") == 0 || access(path, F_OK) == 0)
        return CLI_EX_OK;
    fprintf(stderr, "sluice %s: %s %s: %s\n", spec->name, what, path, strerror(errno));
    return errno == EACCES ? CLI_EX_NOPERM : CLI_EX_NOINPUT;
}

/* "90s", "5m", "2h", "1d" when `s` is a whole number of that unit. */
static void span_text(long s, char *buf, size_t size)
{
    if (s >= 86400 && s % 86400 == 0)
        snprintf(buf, size, "%ldd", s / 86400);
    else if (s >= 3600 && s % 3600 == 0)
        snprintf(buf, size, "%ldh", s / 3600);
    else if (s >= 60 && s % 60 == 0)
        snprintf(buf, size, "%ldm", s / 60);
    else
        snprintf(buf, size, "%lds", s);
}

int cli_duration(
    const char *cmd, const char *what, const char *text, long min, long max, long *seconds)
{
    sluice_error_t err = SLUICE_ERROR_INIT;
    char lo[32], hi[32], got[32];
    long v = 0;

    /* the parser's message starts with `what`: "--timeout: expected a
     * duration: ..." */
    if (syntax_duration(&v, text, what, &err) != SLUICE_OK) {
        fprintf(stderr, "sluice %s: %s; got '%s'\n", cmd, err.text, text);
        return CLI_EX_USAGE;
    }
    if (v < min || v > max) {
        span_text(min, lo, sizeof(lo));
        span_text(max, hi, sizeof(hi));
        span_text(v, got, sizeof(got));
        fprintf(stderr, "sluice %s: %s: expected a duration from %s to %s; got '%s' (%s)\n", cmd,
                what, lo, hi, text, got);
        return CLI_EX_USAGE;
    }
    *seconds = v;
    return CLI_EX_OK;
}

/* ---- parsing ------------------------------------------------------------- */

/* "--name" of an argument such as "--name=value" into buf. */
static const char *long_name(const char *arg, char *buf, size_t size)
{
    snprintf(buf, size, "%.*s", (int)strcspn(arg, "="), arg);
    return buf;
}

/* An unknown or ambiguous long option: say which. */
static int bad_long(const cli_spec_t *spec, const struct option *longs, const char *arg)
{
    char name[128], cands[512];
    size_t n = 0, len, k;
    int hits = 0;

    long_name(arg, name, sizeof(name));
    len = strlen(name) > 2 ? strlen(name) - 2 : 0;
    cands[0] = '\0';
    for (k = 0; longs[k].name != NULL && len > 0; k++) {
        if (strncmp(longs[k].name, name + 2, len) != 0)
            continue;
        hits++;
        n += (size_t)snprintf(cands + n, n < sizeof(cands) ? sizeof(cands) - n : 0, "%s--%s",
                              hits > 1 ? ", " : "", longs[k].name);
    }
    if (hits > 1)
        return cli_usage_error(spec, "ambiguous option '%s' (%s)", name, cands);
    if (strncmp(name, "--", 2) == 0) {
        suggest_t sg;
        suggest_init(&sg, name + 2);
        for (k = 0; longs[k].name != NULL; k++)
            suggest_add(&sg, longs[k].name);
        if (suggest_best(&sg) != NULL)
            return cli_usage_error(spec, "unknown option '%s' (did you mean --%s?)", name,
                                   suggest_best(&sg));
    }
    return cli_usage_error(spec, "unknown option '%s'", name);
}

static const cli_opt_t *opt_of(const cli_spec_t *spec, int id)
{
    for (size_t i = 0; spec->opts != NULL && spec->opts[i] != NULL; i++)
        if (spec->opts[i]->id == id)
            return spec->opts[i];
    return NULL;
}

/* Is `v` one of the space-separated words of `choices`? */
static int is_choice(const char *choices, const char *v)
{
    size_t len = strlen(v);

    for (const char *p = choices; *p != '\0';) {
        size_t w = strcspn(p, " ");
        if (w == len && strncmp(p, v, len) == 0)
            return 1;
        p += w + (p[w] == ' ');
    }
    return 0;
}

/* One option of the table with its value: shared ones into *a, the others
 * to the command.  0, or the exit code. */
static int take(const cli_spec_t *spec,
                const cli_opt_t *o,
                const char *v,
                cli_args_t *a,
                cli_own_fn own,
                void *arg)
{
    char shown[80]; /* "-o/--output" or "--state-dir" */
    int rc;

    if (o->letter)
        snprintf(shown, sizeof(shown), "-%c/--%s", o->letter, o->name);
    else
        snprintf(shown, sizeof(shown), "--%s", o->name);
    if (v != NULL && v[0] == '\0')
        return cli_usage_error(spec, "option '%s' needs a value", shown);
    if (o->kind == CLI_VAL_CHOICE && !is_choice(o->choices, v))
        return cli_usage_error(spec, "option '%s' expects one of: %s; got '%s'", shown, o->choices,
                               v);
    if (o->kind == CLI_VAL_INFILE && a->n_inputs < CLI_MAX_INPUTS) {
        a->inputs[a->n_inputs].what = o->name;
        a->inputs[a->n_inputs++].path = v;
    }
    switch (o->id) {
    case CLI_O_LOG_LEVEL:
    case CLI_O_LOG_FORMAT:
        if (cli_log_option(o->id == CLI_O_LOG_LEVEL, v) != 0)
            return cli_usage_error(spec, "option '%s' expects one of: %s; got '%s'", shown,
                                   o->choices, v);
        return CLI_EX_OK;
    case CLI_O_STATE_DIR:
        a->state_dir = v;
        return CLI_EX_OK;
    case 'o':
        a->json = strcmp(v, "json") == 0;
        return CLI_EX_OK;
    case CLI_O_SERVER:
        a->remote.server = v;
        return CLI_EX_OK;
    case CLI_O_TOKEN_FILE:
        a->remote.token_file = v;
        return CLI_EX_OK;
    case CLI_O_API_CA:
        a->remote.ca_file = v;
        return CLI_EX_OK;
    case CLI_O_CONFIG:
        a->site.config_path = v;
        return CLI_EX_OK;
    case CLI_O_STUDY_RUNTIME:
        a->site.study_path = v;
        return CLI_EX_OK;
    case CLI_O_CLUSTER: /* launch and render: the request's; ls: a filter */
        a->site.cluster = v;
        return CLI_EX_OK;
    case CLI_O_SET:
        if (a->site.n_sets == CLI_MAX_SETS)
            return cli_usage_error(spec, "more than %d --set options", CLI_MAX_SETS);
        a->site.sets[a->site.n_sets++] = v;
        return CLI_EX_OK;
    default:
        break;
    }
    if (own == NULL) {
        fprintf(stderr, "sluice %s: option --%s has no handler\n", spec->name, o->name);
        return CLI_EX_SOFTWARE;
    }
    if ((rc = own(o->id, v, arg)) == CLI_EX_USAGE)
        cli_usage_hint(spec);
    return rc;
}

static int add_operand(const cli_spec_t *spec, cli_args_t *a, char *v)
{
    int max = spec->max_operands < CLI_MAX_OPERANDS ? spec->max_operands : CLI_MAX_OPERANDS;

    if (a->n_operands >= max)
        return cli_usage_error(spec, "unexpected argument '%s'", v);
    if (spec->operand_kind == CLI_VAL_INFILE && a->n_inputs < CLI_MAX_INPUTS) {
        a->inputs[a->n_inputs].what = NULL;
        a->inputs[a->n_inputs++].path = v;
    }
    a->operands[a->n_operands++] = v;
    return CLI_EX_OK;
}

/* The long options and the short-option string of `spec`. */
static int build(const cli_spec_t *spec, struct option *longs, char *shorts, size_t size)
{
    size_t n = 0, s = 0, i;

    shorts[s++] = '-';
    shorts[s++] = ':';
    shorts[s++] = 'h';
    longs[n++] = (struct option){"help", no_argument, NULL, 'h'};
    for (i = 0; spec->opts != NULL && spec->opts[i] != NULL; i++) {
        const cli_opt_t *o = spec->opts[i];

        if (n + 1 >= MAX_OPTS || s + 3 >= size)
            return -1;
        longs[n++] =
            (struct option){o->name, o->value ? required_argument : no_argument, NULL, o->id};
        if (o->letter) {
            shorts[s++] = o->letter;
            if (o->value)
                shorts[s++] = ':';
        }
    }
    longs[n] = (struct option){NULL, 0, NULL, 0};
    shorts[s] = '\0';
    return 0;
}

int cli_parse(const cli_spec_t *spec,
              int argc,
              char **argv,
              cli_args_t *a,
              cli_own_fn own,
              void *arg,
              int *rc)
{
    struct option longs[MAX_OPTS];
    char shorts[2 * MAX_OPTS], name[128];
    int c;

    memset(a, 0, sizeof(*a));
    *rc = CLI_EX_OK;
    if (build(spec, longs, shorts, sizeof(shorts)) != 0) {
        fprintf(stderr, "sluice %s: too many options in the table\n", spec->name);
        *rc = CLI_EX_SOFTWARE;
        return 0;
    }
    optind = 0;
    opterr = 0;
    while (*rc == CLI_EX_OK && (c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        const char *last = argv[optind - 1];
        const cli_opt_t *o;

        if (c == 1) {
            *rc = add_operand(spec, a, optarg);
        } else if (c == 'h') {
            cli_help(spec, stdout);
            return 0;
        } else if (c == ':') {
            if (strncmp(last, "--", 2) == 0)
                *rc = cli_usage_error(spec, "option '%s' needs a value",
                                      long_name(last, name, sizeof(name)));
            else
                *rc = cli_usage_error(spec, "option '-%c' needs a value", optopt);
        } else if (c == '?') {
            /* optopt: 0 for an unknown or ambiguous long option, the
             * option's value for "--flag=value", else the short letter */
            o = optopt != 0 ? opt_of(spec, optopt) : NULL;
            if (optopt == 0)
                *rc = bad_long(spec, longs, last);
            else if (o != NULL && strncmp(last, "--", 2) == 0 && strchr(last, '=') != NULL)
                *rc = cli_usage_error(spec, "option '--%s' takes no value", o->name);
            else if (optopt == 'h' && strncmp(last, "--", 2) == 0)
                *rc = cli_usage_error(spec, "option '--help' takes no value");
            else
                *rc = cli_usage_error(spec, "unknown option '-%c'", optopt);
        } else if ((o = opt_of(spec, c)) != NULL) {
            *rc = take(spec, o, o->value ? optarg : NULL, a, own, arg);
        } else {
            *rc = CLI_EX_SOFTWARE;
        }
    }
    /* after "--": operands only */
    while (*rc == CLI_EX_OK && optind < argc)
        *rc = add_operand(spec, a, argv[optind++]);
    if (*rc != CLI_EX_OK)
        return 0;
    if (a->n_operands < spec->min_operands) {
        *rc = cli_usage_error(spec, "%s is required", spec->operand ? spec->operand : "an operand");
        return 0;
    }
    /* Input files last, so that a usage error is reported first. */
    for (int i = 0; i < a->n_inputs; i++) {
        char what[64];

        if (a->inputs[i].what != NULL)
            snprintf(what, sizeof(what), "--%s", a->inputs[i].what);
        else
            snprintf(what, sizeof(what), "%s", spec->operand);
        if ((*rc = cli_check_input(spec, what, a->inputs[i].path)) != CLI_EX_OK)
            return 0;
    }
    return 1;
}
