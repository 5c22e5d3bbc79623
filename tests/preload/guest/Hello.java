// A Java hello world (issue 26 item 1): HotSpot asks pthread_getattr_np
// about every thread it starts, first thing; under the tracer that call's
// realloc was the thread's first heap event and every JVM hung.
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

public class Hello {
    public static void main(String[] args) throws Exception {
        List<String> words = new ArrayList<>();
        for (int i = 0; i < 1000; i++) words.add("word" + (i % 37));
        long[] sum = new long[1];
        Thread worker = new Thread(() -> { for (int i = 0; i < 500; i++) sum[0] += i; });
        worker.start();
        worker.join();
        System.out.println("hello from java: " + words.size() + " words, thread sum " + sum[0]);
        if (System.getenv("GUEST_OBSERVE") != null) observe();
    }

    // What the program sees of itself (tests/support/guest_observables.h's
    // lines, those Java can read): its descriptors and RSS.
    static void observe() throws Exception {
        long fds, low;
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            List<Integer> numbers = s.map(p -> Integer.parseInt(p.getFileName().toString())).toList();
            fds = numbers.size() - 1;  // the listing's own descriptor
            low = numbers.stream().filter(n -> n < 900).count() - 1;
        }
        long rss = -1;
        for (String line : Files.readAllLines(Path.of("/proc/self/status")))
            if (line.startsWith("VmRSS:")) rss = Long.parseLong(line.split("\\s+")[1]);
        System.out.println("observe fds " + fds);
        System.out.println("observe fds_low " + low);
        System.out.println("observe rss_kib " + rss);
    }
}
