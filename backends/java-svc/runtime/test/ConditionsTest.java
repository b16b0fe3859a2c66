package dev.svc.runtime;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The router operators against python-svc's (svc/values.py cond_*), case by case. */
class ConditionsTest {
    @Test
    void equalityComparesNumbersByValueAndNothingElseAcrossTypes() {
        assertTrue(Conditions.eq(1, 1.0));
        assertTrue(Conditions.eq(3L, new BigInteger("3")));
        assertTrue(Conditions.eq(9007199254740993L, 9007199254740992.0), "as doubles, as python-svc compares");
        assertFalse(Conditions.gt(BigInteger.TEN.pow(400), 1), "too large for a double: no number");
        assertTrue(Conditions.ge(-0.0, 0));
        assertTrue(Conditions.eq("a", "a"));
        assertFalse(Conditions.eq("1", 1));
        assertFalse(Conditions.eq(true, 1), "a boolean is no number");
        assertTrue(Conditions.eq(List.of(1, "a"), List.of(1, "a")));
        assertFalse(Conditions.eq(null, null), "a missing field never equals");
        assertTrue(Conditions.ne(null, "x"));
        assertTrue(Conditions.ne("a", "b"));
    }

    @Test
    void orderingComparesNumbersAndStringsOnly() {
        assertTrue(Conditions.gt(2, 1.5));
        assertTrue(Conditions.ge(2.0, 2));
        assertTrue(Conditions.lt(-1, 0));
        assertTrue(Conditions.le("abc", "abd"));
        // By code point: U+FFFF sorts before U+1F600, not after its surrogates.
        assertTrue(Conditions.lt("\uffff", "\ud83d\ude00"));
        assertFalse(Conditions.gt("2", 1), "a string and a number do not compare");
        assertFalse(Conditions.lt(null, 1));
        assertFalse(Conditions.ge(true, false));
    }

    @Test
    void inExistsAndTruthy() {
        assertTrue(Conditions.in(2, List.of("a", 2.0)));
        assertFalse(Conditions.in(null, List.of()));
        assertTrue(Conditions.exists(false));
        assertFalse(Conditions.exists(null));
        for (Object falsy : new Object[] {null, false, 0, 0.0, "", List.of(), Map.of()}) {
            assertFalse(Conditions.truthy(falsy), String.valueOf(falsy));
        }
        for (Object truthy : new Object[] {true, 1, -0.5, "x", List.of(0), Map.of("a", 1)}) {
            assertTrue(Conditions.truthy(truthy), String.valueOf(truthy));
        }
    }
}
