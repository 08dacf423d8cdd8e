define i32 @main() {
entry:
  br label %b
a:
  %x = add i32 1, 1
  br label %b
b:
  %y = add i32 %x, 1
  ret i32 0
}
!llvm.module.flags = !{!0}
!0 = !{i32 2, !"Debug Info Version", i32 3}
