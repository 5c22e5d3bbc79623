// A Java hello world (issue 26 item 1): HotSpot asks pthread_getattr_np
// about every thread it starts, first thing; under the tracer that call's
// realloc was the thread's first heap event and every JVM hung.
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
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
    // lines, those Java can read): its descriptors and RSS. HotSpot's
    // compiler threads open cgroup files for a moment every ~20 ms
    // (os::available_memory), so one listing may hold a descriptor the next
    // does not: only numbers open in three listings 50 ms apart count, and
    // the listings' own descriptors (on /proc/<pid>/fd) never do.
    static void observe() throws Exception {
        Set<Integer> open = listFds();
        for (int i = 0; i < 2; i++) {
            Thread.sleep(50);
            open.retainAll(listFds());
        }
        long fds = open.size();
        long low = open.stream().filter(n -> n < 900).count();
        long rss = -1;
        for (String line : Files.readAllLines(Path.of("/proc/self/status")))
            if (line.startsWith("VmRSS:")) rss = Long.parseLong(line.split("\\s+")[1]);
        System.out.println("observe fds " + fds);
        System.out.println("observe fds_low " + low);
        System.out.println("observe rss_kib " + rss);
    }

    static Set<Integer> listFds() throws Exception {
        Set<Integer> numbers = new HashSet<>();
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            for (Path p : s.toList()) {
                String target;
                try {
                    target = Files.readSymbolicLink(p).toString();
                } catch (Exception closedMeanwhile) {
                    continue;
                }
                if (target.startsWith("/proc/") && target.endsWith("/fd")) continue;
                numbers.add(Integer.parseInt(p.getFileName().toString()));
            }
        }
        return numbers;
    }
}
