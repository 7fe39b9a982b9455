/*
 * test-attrs.c — every spelling of MXNet attribute values we must read, and
 * the messages for the ones we must refuse.
 */
#include "hybrid.h"
#include "core/attrs.h"

static void
test_tuples (void)
{
  static const struct {
    const char *text;
    int n;
    int64_t v0, v1;
  } good[] = {
    {"(3, 3)", 2, 3, 3}, {"(3,3)", 2, 3, 3}, {"[3, 3]", 2, 3, 3},
    {"(6,)", 1, 6, 0}, {"()", 0, 0, 0}, {"3", 1, 3, 0}, {" ( 1 , 2 ) ", 2, 1, 2},
    {"(-1, 0)", 2, -1, 0}, {"(2L, 3L)", 2, 2, 3},
  };
  for (size_t i = 0; i < G_N_ELEMENTS (good); i++) {
    hy_tuple t;
    g_assert_true (hy_parse_tuple (good[i].text, &t, FALSE));
    g_assert_cmpint (t.n, ==, good[i].n);
    if (t.n > 0)
      g_assert_cmpint (t.v[0], ==, good[i].v0);
    if (t.n > 1)
      g_assert_cmpint (t.v[1], ==, good[i].v1);
  }
  hy_tuple t;
  g_assert_true (hy_parse_tuple ("(None, 2)", &t, TRUE));
  g_assert_cmpint (t.n, ==, 2);
  g_assert_cmpuint (t.none_mask, ==, 1);
  g_assert_false (hy_parse_tuple ("(None, 2)", &t, FALSE));
  static const char *const bad[] = { "", "(", "(3,,3)", "(a, b)", "(,)",
    "(1.5, 2)", "((1,2))" };
  for (size_t i = 0; i < G_N_ELEMENTS (bad); i++)
    g_assert_false (hy_parse_tuple (bad[i], &t, TRUE));
}

static void
test_scalars (void)
{
  gboolean b;
  static const char *const truthy[] = { "True", "true", "1" };
  static const char *const falsy[] = { "False", "false", "0" };
  for (size_t i = 0; i < 3; i++) {
    g_assert_true (hy_parse_bool (truthy[i], &b) && b);
    g_assert_true (hy_parse_bool (falsy[i], &b) && !b);
  }
  g_assert_false (hy_parse_bool ("yes", &b));
  double d;
  g_assert_true (hy_parse_float ("1e-05", &d));
  g_assert_cmpfloat (d, ==, 1e-05);
  g_assert_true (hy_parse_float ("inf", &d) && d > 1e300);
  g_assert_false (hy_parse_float ("1e-05x", &d));
  int64_t v;
  g_assert_true (hy_parse_int ("64", &v) && v == 64);
  g_assert_true (hy_parse_int ("2.0", &v) && v == 2);
  g_assert_false (hy_parse_int ("2.5", &v));
}

static void
test_getters_and_messages (void)
{
  g_autoptr (GHashTable) a = g_hash_table_new (g_str_hash, g_str_equal);
  g_hash_table_insert (a, "eps", "abc");
  g_hash_table_insert (a, "pool_type", "median");
  g_hash_table_insert (a, "end", "None");
  g_autoptr (GError) error = NULL;
  double d;
  g_assert_false (hy_attr_float (a, "eps", 1e-3, &d, &error));
  g_assert_cmpstr (error->message, ==, "attribute 'eps' = 'abc' is not a number");
  g_clear_error (&error);

  /* Absent keys take the op's default. */
  g_assert_true (hy_attr_float (a, "momentum", 0.9, &d, &error));
  g_assert_cmpfloat (d, ==, 0.9);

  static const char *const pools[] = { "max", "avg", "sum", "lp", NULL };
  int choice;
  g_assert_false (hy_attr_enum (a, "pool_type", pools, 0, &choice, &error));
  g_assert_cmpstr (error->message, ==,
      "attribute 'pool_type' = 'median' is not one of max|avg|sum|lp");
  g_clear_error (&error);

  int64_t v;
  gboolean none;
  g_assert_true (hy_attr_opt_int (a, "end", 7, &v, &none, &error));
  g_assert_true (none);
  int dtype;
  g_hash_table_insert (a, "dtype", "float16");
  g_assert_true (hy_attr_dtype (a, "dtype", 0, &dtype, &error));
  g_assert_cmpint (dtype, ==, HY_DTYPE_FLOAT16);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/attrs/tuples", test_tuples);
  g_test_add_func ("/attrs/scalars", test_scalars);
  g_test_add_func ("/attrs/getters-and-messages", test_getters_and_messages);
  return g_test_run ();
}
